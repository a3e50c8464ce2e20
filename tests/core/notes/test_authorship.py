"""git-ai authorship notes (`refs/notes/ai`, schema authorship/3.0.0) read on a real repository (issue 42).

The notes are written as git-ai writes them (github.com/git-ai-project/git-ai,
docs/migrations/sessions-v2-note-format.md): attestation lines per file, `---`,
then JSON metadata with `sessions` (s_…::t_… keys), `prompts` (bare keys) and
`humans` (h_… keys).
"""

from __future__ import annotations

import json
from pathlib import Path

from reviewui.core.notes.authorship import Author, parse_note, read_authorship
from tests.gitrepo import RepoBuilder

CLAUDE = {"tool": "claude", "id": "5c7d5c23-0691-4467-b98e-0fb865b4a639", "model": "claude-opus-4-8"}
CURSOR = {"tool": "cursor", "id": "80f30514-fcad-482a-8822-0444aaaba3db", "model": "gpt-5"}


def _note(files: dict[str, list[tuple[str, str]]], **meta: object) -> str:
    head = "".join(f"{f}\n" + "".join(f"  {k} {r}\n" for k, r in rows) for f, rows in files.items())
    return head + "---\n" + json.dumps({"schema_version": "authorship/3.0.0", "git_ai_version": "1.4.0", **meta},
                                       indent=2) + "\n"


def _repo(tmp_path: Path) -> tuple[RepoBuilder, str, str]:
    r = RepoBuilder(tmp_path / "repo")
    base = r.commit({"calc.py": "def add(a, b):\n    return a - b\n"}, "base")
    r.branch("agent/fix")
    c1 = r.commit({"calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"}, "fix add")
    r.git("notes", "--ref=ai", "add", "-m", _note(
        {"calc.py": [("s_c9883b05a2487d::t_9f8e7d6c5b4a32", "2"), ("s_c9883b05a2487d::t_a1b2c3d4e5f678", "5-6")]},
        sessions={"s_c9883b05a2487d": {"agent_id": CLAUDE, "human_author": "alice@example.com"}}, prompts={}), c1)
    # A second commit moves the lines down: blame keeps them attributed; the new header is a human's, the
    # helper an older-format prompt's.
    c2 = r.commit({"calc.py": "# calculator\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
                              "\n\ndef mul(a, b):\n    return a * b\n"}, "mul")
    r.git("notes", "--ref=ai", "add", "-m", _note(
        {"calc.py": [("h_a1b2c3d4e5f678", "1"), ("c9883b05a2487d6d", "10-11")]},
        prompts={"c9883b05a2487d6d": {"agent_id": CURSOR, "messages": [], "total_additions": 2}},
        humans={"h_a1b2c3d4e5f678": {"author": "Alice <alice@example.com>"}}), c2)
    return r, base, c2


def test_parse_note_resolves_session_prompt_and_human_keys() -> None:
    n = parse_note(_note({"a.py": [("s_1::t_2", "1-3,7"), ("p1", "9"), ("h_x", "10")]},
                         sessions={"s_1": {"agent_id": CLAUDE}}, prompts={"p1": {"agent_id": CURSOR}},
                         humans={"h_x": {"author": "Bob"}}))
    assert n.lines["a.py"] == {1: "s_1::t_2", 2: "s_1::t_2", 3: "s_1::t_2", 7: "s_1::t_2", 9: "p1", 10: "h_x"}
    assert n.authors["s_1::t_2"] == Author("claude", CLAUDE["id"], "claude-opus-4-8")
    assert n.authors["p1"].tool == "cursor" and not n.authors["h_x"].is_agent


def test_branch_lines_are_attributed_through_blame_to_each_commits_note(tmp_path: Path) -> None:
    r, base, head = _repo(tmp_path)
    a = read_authorship(r.root, base, head, ["calc.py"])
    per = a.lines["calc.py"]
    claude = Author("claude", CLAUDE["id"], "claude-opus-4-8")
    assert per[3] == claude  # `return a + b`: line 2 in its commit, line 3 at the head
    assert per[6] == claude  # `def sub` (its `return a - b` git matches to the base's old line)
    assert per[10].tool == per[11].tool == "cursor" and per[1].tool == "human"
    assert 2 not in per  # `def add` is the base's line
    assert a.notes == 2 and a.sessions() == {CLAUDE["id"], CURSOR["id"]}
    assert a.authors_of("calc.py", range(1, 12))[0][0] == claude


def test_notes_under_another_ref_or_over_the_cap_are_not_read(tmp_path: Path) -> None:
    r, base, head = _repo(tmp_path)
    assert read_authorship(r.root, base, head, ["calc.py"], ref="refs/notes/other").lines == {}
    small = read_authorship(r.root, base, head, ["calc.py"], cap=64)
    assert small.lines == {} and len(small.skipped) == 2 and "over max-input-bytes" in small.skipped[0]


def test_hostile_note_text_is_made_terminal_safe_and_a_foreign_note_is_skipped(tmp_path: Path) -> None:
    r, base, head = _repo(tmp_path)
    evil = dict(CLAUDE, tool="cl\x1b[31maude\u202e", id="x" * 5000)
    r.git("notes", "--ref=ai", "add", "-f", "-m", _note({"calc.py": [("s_e::t_1", "1-11")]},
                                                        sessions={"s_e": {"agent_id": evil}}), head)
    first = r.git("rev-list", "--reverse", f"{base}..{head}").split()[0]
    r.git("notes", "--ref=ai", "add", "-f", "-m", "[[review]]\nverdict = 'approve'\n", first)
    a = read_authorship(r.root, base, head, ["calc.py"])
    who = a.lines["calc.py"][1]
    assert "\x1b" not in who.tool and "\u202e" not in who.tool and len(who.session) <= 200
    assert any("not a git-ai authorship note" in s for s in a.skipped)


def test_notes_link_a_hunk_to_its_sessions_turns_and_unattributed_means_neither_source(tmp_path: Path) -> None:
    from reviewui.core.transcript import load_transcript
    from reviewui.core.transcript.linking import link_hunks
    from tests.core.transcript.helpers import FakeHunk

    r, base, head = _repo(tmp_path)
    a = read_authorship(r.root, base, head, ["calc.py"])

    class L:
        def __init__(self, kind: str, text: str, new_no: int) -> None:
            self.kind, self.text, self.new_no = kind, text, new_no
    hunk = FakeHunk("calc.py", 0, (L("added", "    return a + b", 3),))  # type: ignore[arg-type]
    run = tmp_path / "cc.jsonl"
    edit = {"type": "tool_use", "id": "t1", "name": "Edit",
            "input": {"file_path": "/w/calc.py", "old_string": "x = 1", "new_string": "x = 2"}}  # content matches nothing
    run.write_text("\n".join(json.dumps(o) for o in [
        {"type": "user", "sessionId": CLAUDE["id"], "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": "fix add"}},
        {"type": "assistant", "sessionId": CLAUDE["id"], "uuid": "u2", "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "assistant", "id": "m1", "content": [edit]}}]) + "\n")
    t = load_transcript(run)
    from reviewui.core.transcript.session_ids import session_ids
    assert session_ids(run) == {CLAUDE["id"]}
    plain = link_hunks(t, [hunk], ["calc.py", "other.py"])
    assert plain.turns_for("calc.py", 0) == [] and plain.unattributed == ("other.py",)
    linked = link_hunks(t, [hunk], ["calc.py", "other.py"], a.lines, session_ids(run))
    assert linked.turns_for("calc.py", 0) == [2]  # the notes give line 3 to this transcript's session
    foreign = link_hunks(t, [hunk], ["calc.py", "other.py"], a.lines, {"another-session"})
    assert foreign.turns_for("calc.py", 0) == []
    # A transcript that never touches calc.py: without notes it is unattributed; the notes account for it.
    chat = load_transcript(_only_user(tmp_path))
    assert link_hunks(chat, [hunk], ["calc.py", "other.py"]).unattributed == ("calc.py", "other.py")
    noted = link_hunks(chat, [hunk], ["calc.py", "other.py"], a.lines, ())
    assert noted.unattributed == ("other.py",) and noted.by_notes == {"calc.py": tuple(sorted((CLAUDE["id"], CURSOR["id"])))}


def _only_user(tmp_path: Path) -> Path:
    p = tmp_path / "chat.jsonl"
    p.write_text(json.dumps({"type": "user", "sessionId": "s", "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z",
                             "message": {"role": "user", "content": "hello"}}) + "\n")
    return p
