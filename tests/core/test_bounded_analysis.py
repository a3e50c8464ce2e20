"""The analysis caps in core/bounded.py and the capped git reads they rest on."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from reviewui.core.bounded import NotAnalysed, parse_python, tree_depth
from reviewui.core.diff import load_diff
from reviewui.core.git import blob_sizes, read_blobs, show_file
from tests.gitrepo import make_repo


def test_read_blobs_cuts_a_big_blob_and_still_reads_the_ones_after_it(tmp_path: Path) -> None:
    big = b"".join(b"line %07d\n" % i for i in range(200_000))  # 2.4 MB
    rb = make_repo(tmp_path / "r", {"a.txt": "a\n"}, {"big.txt": big, "small.txt": "after the big one\n"})
    got = dict(read_blobs(rb.root, ["agent/work:big.txt", "agent/work:missing", "agent/work:small.txt",
                                    "agent/work:", "agent/work:a.txt"], cap=1000))
    assert got["agent/work:big.txt"] is not None
    assert got["agent/work:big.txt"].size == len(big) and got["agent/work:big.txt"].data == big[:1001]
    assert got["agent/work:big.txt"].cut
    assert got["agent/work:missing"] is None
    assert got["agent/work:"] is None  # a tree is not a blob
    small = got["agent/work:small.txt"]
    assert small is not None and small.data == b"after the big one\n" and not small.cut
    assert got["agent/work:a.txt"] is not None and got["agent/work:a.txt"].data == b"a\n"


def test_show_file_reads_at_most_one_byte_past_the_cap(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", {"a.txt": "a\n"}, {"b.txt": "x" * 5000})
    assert show_file(rb.root, "agent/work", "b.txt", cap=100) == b"x" * 101
    assert show_file(rb.root, "agent/work", "b.txt") == b"x" * 5000
    assert show_file(rb.root, "agent/work", "nope.txt") is None
    assert show_file(rb.root, "agent/work", "bad\npath") is None


def test_parse_python_refuses_deep_and_large_and_keeps_syntax_errors() -> None:
    with pytest.raises(NotAnalysed, match="nested too deeply to parse"):
        parse_python("x = " + "+".join(["1"] * 200_000))
    with pytest.raises(NotAnalysed, match="nested deeper than 100 levels"):
        parse_python("x = " + "+".join(["1"] * 150))  # parses, but ast's recursive helpers would not cope
    with pytest.raises(NotAnalysed, match="over the 1 MiB cap"):
        parse_python("x = 1\n" * 200_000)
    with pytest.raises(SyntaxError):
        parse_python("def (:\n")
    assert isinstance(parse_python("x = " + "+".join(["1"] * 80)), ast.Module)
    assert issubclass(NotAnalysed, ValueError)  # every `except (SyntaxError, ValueError)` already holds


def test_tree_depth_counts_without_recursion() -> None:
    tree = ast.parse("x = " + "+".join(["1"] * 2000))  # 2000 levels: no recursion limit reached
    assert tree_depth(tree, 10_000) > 2000
    assert tree_depth(ast.parse("x = 1"), 100) == 4  # Module > Assign > Name > Store
    assert tree_depth(tree, 50) == 51  # stops early past the limit


def test_the_diff_leaves_a_file_over_the_cap_unparsed(tmp_path: Path) -> None:
    big = "".join(f"value_{i} = {i}\n" for i in range(120_000))  # ~2 MiB of text
    rb = make_repo(tmp_path / "r", {"a.py": "a = 1\n"}, {"big.py": big, "a.py": "a = 2\n"})
    diff = load_diff(str(rb.root), "main", "agent/work")
    diff.preload()
    f, a = diff.file("big.py"), diff.file("a.py")
    assert f is not None and a is not None
    assert f.binary and f.over_cap and f.hunks == () and len(f.raw_patch) < 1000  # git never built the patch
    assert not a.over_cap and [h.added for h in a.hunks] == [1]
    assert diff.over_cap_paths() == frozenset({"big.py"})
    assert f.new_blob is not None and len(f.new_blob) < 40  # `--raw` abbreviates: sizes are keyed as asked
    assert blob_sizes(rb.root, [f.new_blob]) == {f.new_blob: len(big)}


def test_a_config_file_is_read_to_its_own_cap_not_the_analysis_one(tmp_path: Path) -> None:
    from reviewui.core.config import branch_config_change

    padding = "".join(f"# {i:07d} padding the file past one MiB\n" for i in range(40_000))
    big = padding + "[tool.reviewui]\ntimeout = 30\n"  # the setting lies past the analysis cap
    rb = make_repo(tmp_path / "r", {"a.py": "x = 1\n"}, {"pyproject.toml": big})
    change = branch_config_change(rb.root, "main", "agent/work")  # 1.5 MiB: whole, valid TOML, not cut
    assert change.keys == ("timeout",) and change.error is None
