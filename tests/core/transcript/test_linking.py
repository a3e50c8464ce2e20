"""Hunk ↔ turn links: by path suffix and by content, on stand-in hunks and on a real git diff."""

from __future__ import annotations

import json
from pathlib import Path

from reviewui.core.diff import load_diff
from reviewui.core.transcript import link_hunks, load_transcript
from reviewui.core.transcript.linking import paths_match
from tests.core.transcript.helpers import FIXTURES, hunk
from tests.gitrepo import RepoBuilder

CC = FIXTURES / "claude_code_red_green.jsonl"


def test_paths_match_by_suffix_on_component_boundaries() -> None:
    assert paths_match("/home/dev/ledger/src/ledger.py", "src/ledger.py")
    assert paths_match("./src/ledger.py", "src/ledger.py")
    assert paths_match("ledger.py", "src/ledger.py")  # agent ran inside src/
    assert not paths_match("/home/dev/ledger/src/myledger.py", "src/ledger.py")
    assert not paths_match("/x/other/ledger.py", "src/ledger.py")
    assert not paths_match("", "src/ledger.py")


def test_hunks_link_to_the_turns_that_wrote_their_lines() -> None:
    t = load_transcript(CC)
    src = hunk("src/ledger.py", 0, " def total_of(batch):", "-    return sum(batch) if batch else None",
               "+    if not batch:", "+        return 0", "+    return sum(batch)")
    test = hunk("tests/test_ledger.py", 0, " def test_empty_batch():", "-    assert total_of([]) is None",
                "+    assert total_of([]) == 0")
    stray = hunk("src/ledger.py", 1, " ", "+def unrelated_helper():", "+    return 42")
    other_file = hunk("README.md", 0, "+Ledger totals.")
    links = link_hunks(t, [src, test, stray, other_file])
    assert links.turns_for("src/ledger.py", 0) == [7]  # the Write
    assert links.turns_for("tests/test_ledger.py", 0) == [5]  # the Edit after the red run
    assert links.turns_for("src/ledger.py", 1) == []  # not in transcript
    assert links.turns_for("README.md", 0) == []
    assert links.turns_for("nope.py", 9) == []
    assert links.hunks_for(7) == [("src/ledger.py", 0)]
    assert links.hunks_for(5) == [("tests/test_ledger.py", 0)]
    assert links.hunks_for(1) == []
    assert links.files_for(7) == ["src/ledger.py"]


def _session(tmp_path: Path, edits: list[tuple[str, str, str]]) -> Path:
    lines = []
    for i, (path, old, new) in enumerate(edits):
        lines.append({"type": "assistant", "uuid": f"a{i}", "sessionId": "s", "message": {"id": f"m{i}", "role": "assistant",
                      "content": [{"type": "tool_use", "id": f"t{i}", "name": "Edit",
                                   "input": {"file_path": path, "old_string": old, "new_string": new}}]}})
        lines.append({"type": "user", "uuid": f"r{i}", "sessionId": "s", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}]}})
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


def test_a_hunk_written_in_two_turns_links_to_both(tmp_path: Path) -> None:
    t = load_transcript(_session(tmp_path, [
        ("/r/a.py", "def f():\n    pass", "def f():\n    x = compute()\n    return x"),
        ("/r/a.py", "    return x", "    return x + offset"),
    ]))
    h = hunk("a.py", 0, " def f():", "-    pass", "+    x = compute()", "+    return x + offset")
    links = link_hunks(t, [h])
    assert links.turns_for("a.py", 0) == [1, 3]
    # The line turn 1 wrote and turn 3 replaced is not what links turn 1: "x = compute()" is.
    only_first = hunk("a.py", 0, "+    x = compute()")
    assert link_hunks(t, [only_first]).turns_for("a.py", 0) == [1]


def test_trivial_lines_alone_do_not_link(tmp_path: Path) -> None:
    t = load_transcript(_session(tmp_path, [("/r/a.py", "if x:\n    a()", "if x:\n    a()\nelse:\n    pass")]))
    h = hunk("a.py", 3, "+    pass", "+}")
    # Only trivial added lines: linked when all of them were written by the turn…
    assert link_hunks(t, [hunk("a.py", 0, "+else:", "+    pass")]).turns_for("a.py", 0) == [1]
    # …but a trivial line the turn did not write breaks it.
    assert link_hunks(t, [h]).turns_for("a.py", 3) == []


def test_removal_only_hunk_links_to_the_turn_that_removed_the_lines(tmp_path: Path) -> None:
    t = load_transcript(_session(tmp_path, [("/r/a.py", "import os\nimport legacy_shim\n", "import os\n")]))
    h = hunk("a.py", 0, " import os", "-import legacy_shim")
    assert link_hunks(t, [h]).turns_for("a.py", 0) == [1]


def test_shell_edits_without_content_link_only_when_nothing_else_does(tmp_path: Path) -> None:
    lines = [
        {"type": "assistant", "uuid": "a", "sessionId": "s", "message": {"id": "m", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sed -i 's/foo/bar/' src/a.py"}}]}},
        {"type": "assistant", "uuid": "b", "sessionId": "s", "message": {"id": "m2", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "Edit", "input": {"file_path": "src/a.py", "old_string": "x = 1", "new_string": "x = 2"}}]}},
    ]
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    t = load_transcript(p)
    links = link_hunks(t, [hunk("src/a.py", 0, "-x = 1", "+x = 2"), hunk("src/a.py", 1, "-foo()", "+bar()")])
    assert links.turns_for("src/a.py", 0) == [2]
    assert links.turns_for("src/a.py", 1) == [1]


def test_links_on_a_real_git_diff(tmp_path: Path) -> None:
    """Build the branch the fixture transcript describes, add one change it does not, diff, link."""
    old_src = "def total_of(batch):\n    return sum(batch) if batch else None\n"
    new_src = "def total_of(batch):\n    if not batch:\n        return 0\n    return sum(batch)\n"
    old_test = "from ledger import total_of\n\n\ndef test_empty_batch():\n    assert total_of([]) is None\n\n\ndef test_sum():\n    assert total_of([1, 2]) == 3\n"
    new_test = old_test.replace("is None", "== 0")
    repo = RepoBuilder(tmp_path / "repo")
    base = repo.commit({"src/ledger.py": old_src, "tests/test_ledger.py": old_test, "README.md": "# ledger\n"}, "base")
    repo.branch("agent/fix")
    head = repo.commit({"src/ledger.py": new_src, "tests/test_ledger.py": new_test, "README.md": "# ledger\n\nTotals.\n"}, "fix")
    diff = load_diff(str(repo.root), base, head)
    hunks = diff.hunks()
    links = link_hunks(load_transcript(CC), hunks)
    by_file = {h.file: links.turns_for(h.file, h.index) for h in hunks}
    assert by_file == {"src/ledger.py": [7], "tests/test_ledger.py": [5], "README.md": []}


def test_removal_of_only_trivial_lines_links_when_the_turn_removed_them(tmp_path: Path) -> None:
    t = load_transcript(_session(tmp_path, [("/r/a.py", "def f():\n    pass\n    return 1", "def f():\n    return 1")]))
    assert link_hunks(t, [hunk("a.py", 0, " def f():", "-    pass")]).turns_for("a.py", 0) == [1]
    assert link_hunks(t, [hunk("a.py", 0, " def f():", "-    else:")]).turns_for("a.py", 0) == []
