"""Reading a commit's files in one batch: odd names, missing paths, binary and unparsable files."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.findings.source import TreeSource, parse, read_blobs
from tests.gitrepo import RepoBuilder


def test_batch_read_handles_odd_names_missing_and_binary(tmp_path: Path) -> None:
    rb = RepoBuilder(tmp_path / "r")
    files = {
        "dir with space/naïve ü.py": "S = 'ü'\n",
        "a 12 missing": "not what it seems\n",
        "bin.dat": bytes(range(256)),
        "empty.py": "",
        "bad.py": "def (:\n",
    }
    sha = rb.commit(files)
    got = read_blobs(str(rb.root), sha, ["dir with space", *files, "nope.py"])  # a tree first: its body must be skipped
    assert got["dir with space/naïve ü.py"] == "S = 'ü'\n".encode()
    assert got["a 12 missing"] == b"not what it seems\n"
    assert got["bin.dat"] == bytes(range(256)) and got["empty.py"] == b""
    assert got["nope.py"] is None and got["dir with space"] is None
    src = TreeSource(str(rb.root), sha)
    assert src.text("bin.dat") is None and src.text("empty.py") == ""
    assert set(src.trees()) == {"dir with space/naïve ü.py", "empty.py"}
    assert src.tree("bad.py") is None


def test_parse_survives_hostile_input() -> None:
    assert parse("x = (" * 100_000) is None
    assert parse("a\0b") is None
    assert parse("print('\x1b[31m[bold red]x[/bold red]')\n") is not None


def test_parse_or_none_answers_none_for_no_source_and_a_tree_for_bytes() -> None:
    # The guard batch and the witness targets ask it for a file that may be absent at the head.
    from reviewui.core.bounded import parse_python_or_none

    assert parse_python_or_none(None) is None
    assert parse_python_or_none("def (") is None
    tree = parse_python_or_none(b"def f(x):\n    return x\n", "f.py")
    assert tree is not None and [type(n).__name__ for n in tree.body] == ["FunctionDef"]
