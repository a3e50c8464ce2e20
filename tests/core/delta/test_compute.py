"""The since-verdict view on real repositories: each hunk now `new`, `changed`, `unchanged`, or judged and `gone`."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.delta.compute import compute_delta
from reviewui.core.delta.match import Block, LineMap, match_file
from reviewui.core.delta.model import FILE_HEADERS
from reviewui.core.diff import load_diff
from tests.gitrepo import RepoBuilder

FUNCS = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(12))
"""A module whose functions lie far enough apart that each edit is a hunk of its own."""


def _edit(text: str, i: int, new: str) -> str:
    return text.replace(f"    return x + {i}\n", new, 1)


def _states(delta) -> list[tuple[str, str]]:
    return [(h.file, h.state) for h in delta.hunks]


@pytest.fixture
def rb(tmp_path: Path) -> RepoBuilder:
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"mod.py": FUNCS, "other.py": FUNCS}, "base")
    rb.branch("agent/work")
    return rb


def test_push_on_the_same_base_marks_changed_new_unchanged_and_gone(rb: RepoBuilder) -> None:
    base = rb.git("rev-parse", "main")
    v1 = _edit(_edit(_edit(FUNCS, 1, "    return x - 1\n"), 5, "    return x * 5\n"), 9, "    return x // 9\n")
    judged = rb.commit({"mod.py": v1}, "first")
    # the push: hunk f1 unchanged, f5 edited again, f9 put back (gone), a new hunk at f11
    v2 = _edit(_edit(_edit(FUNCS, 1, "    return x - 1\n"), 5, "    return x * 55\n"), 11, "    return -x\n")
    head = rb.commit({"mod.py": v2}, "second")
    delta = compute_delta(rb.root, base, judged, base, head)
    assert [(h.state, h.index) for h in delta.hunks] == [("unchanged", 0), ("changed", 1), ("new", 2), ("gone", None)]
    assert delta.counts() == {"changed": 1, "new": 1, "unchanged": 1, "gone": 1}
    changed = delta.hunks[1]
    assert changed.was == (("mod.py", delta_header(rb, base, judged, "mod.py", 1)),)
    assert "--    return x * 5" not in changed.interdiff  # the interdiff keeps each line's own mark
    assert "-+    return x * 5" in changed.interdiff and "++    return x * 55" in changed.interdiff
    assert delta.words() == "1 hunk changed, 1 new, 1 unchanged, 1 gone"


def delta_header(rb: RepoBuilder, base: str, head: str, path: str, index: int) -> str:
    d = load_diff(str(rb.root), base, head)
    f = d.file(path)
    assert f is not None
    return f.hunks[index].header


@pytest.mark.parametrize("edit", [
    "      return x - 1\n",          # re-indented: Python's whitespace is code
    "    return x  - 1\n",           # one more space between tokens
    "    return x - 1 \n",           # a trailing space
])
def test_whitespace_is_code(rb: RepoBuilder, edit: str) -> None:
    base = rb.git("rev-parse", "main")
    judged = rb.commit({"mod.py": _edit(FUNCS, 1, "    return x - 1\n")})
    head = rb.commit({"mod.py": _edit(FUNCS, 1, edit)})
    assert [h.state for h in compute_delta(rb.root, base, judged, base, head).hunks] == ["changed"]


def test_a_space_inside_a_string_is_changed(rb: RepoBuilder) -> None:
    base = rb.git("rev-parse", "main")
    judged = rb.commit({"mod.py": _edit(FUNCS, 1, "    return 'a b'\n")})
    head = rb.commit({"mod.py": _edit(FUNCS, 1, "    return 'a  b'\n")})
    assert [h.state for h in compute_delta(rb.root, base, judged, base, head).hunks] == ["changed"]


def test_rebase_onto_a_moved_base_keeps_identical_hunks_unchanged(rb: RepoBuilder) -> None:
    old_base = rb.git("rev-parse", "main")
    judged = rb.commit({"mod.py": _edit(_edit(FUNCS, 3, "    return 3\n"), 8, "    return 8\n")}, "agent")
    # main gains lines above both hunks (far from them) and a change of its own in another file
    rb.checkout("main")
    new_base = rb.commit({"mod.py": "import os\n\n\n" + FUNCS, "other.py": FUNCS + "X = 1\n"}, "upstream")
    rb.git("checkout", "-q", "-b", "agent/rebased", new_base)
    head = rb.commit({"mod.py": "import os\n\n\n" + _edit(_edit(FUNCS, 3, "    return 3\n"), 8, "    return 88\n")})
    delta = compute_delta(rb.root, old_base, judged, new_base, head)
    now = load_diff(str(rb.root), new_base, head).file("mod.py")
    assert now is not None and now.hunks[0].new_start != load_diff(str(rb.root), old_base, judged).file(
        "mod.py").hunks[0].new_start  # the line numbers did move
    assert [(h.file, h.state) for h in delta.hunks] == [("mod.py", "unchanged"), ("mod.py", "changed")]
    # upstream's own change to other.py is no hunk of the agent's, in either patch
    assert all(h.file != "other.py" for h in delta.hunks)


def test_renamed_between_the_heads_follows_the_file(rb: RepoBuilder) -> None:
    base = rb.git("rev-parse", "main")
    judged = rb.commit({"mod.py": _edit(_edit(FUNCS, 2, "    return 2\n"), 7, "    return 7\n")})
    head = rb.commit({"mod.py": None, "renamed.py": _edit(_edit(FUNCS, 2, "    return 2\n"), 7, "    return 77\n")})
    delta = compute_delta(rb.root, base, judged, base, head)
    assert delta.renamed == {"mod.py": "renamed.py"}
    # the branch's patch is now a rename with the same two hunks: one as judged, one changed
    assert [(h.file, h.state) for h in delta.hunks] == [("renamed.py", "unchanged"), ("renamed.py", "changed")]
    assert delta.hunks[0].was[0][0] == "mod.py"


def test_binary_and_deleted_files_are_judged_by_their_content(rb: RepoBuilder) -> None:
    rb.checkout("main")
    base = rb.commit({"blob.bin": b"\x00\x01" * 50, "old.bin": b"\x00\x09" * 50, "gone.py": FUNCS}, "binaries")
    rb.git("checkout", "-q", "-B", "agent/work", base)
    judged = rb.commit({"blob.bin": b"\x00\x02" * 50, "old.bin": None, "gone.py": None, "img.bin": b"\x00\x07" * 9})
    head = rb.commit({"blob.bin": b"\x00\x03" * 50, "img.bin": b"\x00\x07" * 9})
    delta = compute_delta(rb.root, base, judged, base, head)
    by_file = {h.file: (h.header, h.state) for h in delta.hunks}
    assert by_file == {
        "blob.bin": (FILE_HEADERS[0], "changed"),   # another binary edit
        "gone.py": ("@@ -1,48 +0,0 @@", "unchanged"),  # deleted then, deleted now
        "img.bin": (FILE_HEADERS[0], "unchanged"),  # the same bytes
        "old.bin": (FILE_HEADERS[0], "unchanged"),  # deleted then, deleted now
    }


def test_a_file_the_push_stops_changing_is_gone_and_a_verdict_on_this_head_changes_nothing(rb: RepoBuilder) -> None:
    base = rb.git("rev-parse", "main")
    judged = rb.commit({"mod.py": _edit(FUNCS, 1, "    return 1\n"), "other.py": _edit(FUNCS, 4, "    return 4\n")})
    head = rb.commit({"other.py": FUNCS})
    delta = compute_delta(rb.root, base, judged, base, head)
    assert [(h.file, h.state) for h in delta.hunks] == [("mod.py", "unchanged"), ("other.py", "gone")]
    same = compute_delta(rb.root, base, head, base, head)
    assert [h.state for h in same.hunks] == ["unchanged"]


def test_line_map_follows_lines_past_insertions_and_into_changed_runs() -> None:
    # old 1-10; lines 3-4 replaced by three lines (new 3-5); two lines inserted before old 8
    lines = LineMap([Block(3, 5, 3, 6), Block(8, 8, 9, 11)])
    assert lines.span(1, 2) == (1, 2)
    assert lines.span(3, 4) == (3, 6)  # into a changed run: the whole run now
    assert lines.span(6, 8) == (7, 9)  # past the replacement: one line further down
    assert lines.span(8, 9) == (11, 12)  # past the insertion too
    assert match_file((), (), lines).gone == ()
