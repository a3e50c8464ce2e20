"""Authorship notes in the gate: `check --format json` names who wrote each hunk, and a note is bounded (issue 42)."""

from __future__ import annotations

import json
from pathlib import Path

from reviewui.core.diff import load_diff
from reviewui.core.notes.authorship import parse_note, read_authorship
from tests.clirun import run_cli
from tests.core.notes.test_authorship import CLAUDE, CURSOR, _note, _repo


def test_hunk_records_name_each_hunks_authors_and_line_counts(tmp_path: Path) -> None:
    r, base, head = _repo(tmp_path)
    diff = load_diff(str(r.root), base, head)
    hunks = [h for f in diff.files for h in f.hunks]
    a = read_authorship(r.root, base, head, ["calc.py"])
    records = a.hunk_records(hunks)
    added = [(h.index, [ln.new_no for ln in h.lines if ln.kind == "added"]) for h in hunks]
    assert [rec["hunk"] for rec in records] == [i for i, nos in added if any(n in a.lines["calc.py"] for n in nos)]
    every = [(w["tool"], w["session"], w["lines"]) for rec in records for w in rec["authors"]]
    by_tool: dict[str, int] = {}
    for tool, _, n in every:
        by_tool[tool] = by_tool.get(tool, 0) + n
    per = a.lines["calc.py"]
    assert by_tool == {t: sum(1 for i, nos in added for n in nos if n in per and per[n].tool == t)
                       for t in ("claude", "cursor", "human")}
    assert {s for t, s, _ in every if t == "claude"} == {CLAUDE["id"]}
    assert by_tool["claude"] >= 2 and by_tool["cursor"] == 2 and by_tool["human"] == 1


def test_check_json_carries_the_authors_and_nothing_without_notes(tmp_path: Path) -> None:
    r, base, head = _repo(tmp_path)
    doc = json.loads(run_cli("check", "agent/fix", "--base", base, "--format", "json", cwd=r.root).stdout)
    tools = {w["tool"]: w for rec in doc["authors"] for w in rec["authors"]}
    assert set(tools) == {"claude", "cursor", "human"} and tools["cursor"]["session"] == CURSOR["id"]
    assert all(rec["file"] == "calc.py" and isinstance(rec["hunk"], int) for rec in doc["authors"])
    r.git("update-ref", "-d", "refs/notes/ai")
    bare = json.loads(run_cli("check", "agent/fix", "--base", base, "--format", "json", cwd=r.root).stdout)
    assert bare["authors"] == []


def test_a_note_attesting_millions_of_lines_is_refused_not_expanded() -> None:
    huge = _note({"a.py": [("s_1::t_1", "1-999999"), ("s_1::t_2", "1-999999"), ("s_1::t_3", "5-999999")]},
                 sessions={"s_1": {"agent_id": CLAUDE}})
    try:
        parse_note(huge)
    except ValueError as e:
        assert "attests more than" in str(e)
    else:
        raise AssertionError("a note expanding to ~3M lines was read")
    assert len(parse_note(_note({"a.py": [("s_1::t_1", "1-999999")]}, sessions={"s_1": {"agent_id": CLAUDE}}))
               .lines["a.py"]) == 999999
