"""SWE-agent `.traj` files and OpenHands trajectories (V0 event lists, V1 conversation folders)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.model import (
    CLAIMS_DONE,
    COMPACTION,
    EDITS_EXISTING_TEST,
    EDITS_TEST_AFTER_FAILURE,
    REASONING_RESENT,
    TOOL_ERROR,
    WRITES_TESTS,
)
from tests.core.transcript.helpers import FIXTURES


def test_swe_agent_test_rewritten_after_red_run() -> None:
    t = load_transcript(FIXTURES / "swe_agent_red_green.traj")
    assert t.format == "swe-agent"
    assert len(t.turns) == 11  # the demonstration item is left out
    assert "demonstration" not in " ".join(x.text for x in t.turns)
    edit = t.turns[4]
    assert (edit.tool_calls[0].name, edit.tool_calls[0].kind) == ("str_replace_editor", "edit")
    (fe,) = edit.edits
    assert (fe.path, fe.old, fe.new) == ("/repo/tests/test_calc.py", "assert div(1, 0) == 0", "assert div(1, 1) == 1")
    assert edit.flags == (WRITES_TESTS, EDITS_EXISTING_TEST, EDITS_TEST_AFTER_FAILURE)
    assert t.cwd == "/repo"


def test_swe_agent_classic_edit_applies_to_the_open_file_and_submit_claims() -> None:
    t = load_transcript(FIXTURES / "swe_agent_red_green.traj")
    (fe,) = t.turns[8].edits
    assert fe.path == "/repo/src/calc.py" and fe.new == "    return a / b"
    assert WRITES_TESTS not in t.turns[8].flags
    assert t.turns[10].tool_calls[0].kind == "finish" and CLAIMS_DONE in t.turns[10].flags


def test_openhands_v0_events() -> None:
    t = load_transcript(FIXTURES / "openhands_v0_test_edit.json")
    assert t.format == "openhands"
    # agent_state_changed is bookkeeping, not a turn
    assert [x.role for x in t.turns] == ["user", "assistant", "tool", "assistant", "tool", "system", "assistant"]
    assert TOOL_ERROR in t.turns[2].flags  # exit code 1
    edit = t.turns[3]
    assert edit.flags == (WRITES_TESTS, EDITS_EXISTING_TEST, EDITS_TEST_AFTER_FAILURE)
    (fe,) = edit.edits
    assert fe.old == "assert greet() == 'hello'" and fe.existed is True
    assert (edit.usage.input, edit.usage.cached) == (4300, 3950)
    assert t.turns[5].flags == (COMPACTION,)
    assert t.last_claim() is t.turns[6]


def test_openhands_v1_folder_with_a_broken_event_file() -> None:
    folder = FIXTURES / "openhands_v1_conversation"
    t = load_transcript(folder)
    assert t.format == "openhands"
    assert t.skipped_lines == 1  # event-00004-broken.json
    assert [x.role for x in t.turns] == ["system", "user", "assistant", "tool", "assistant"]
    create = t.turns[2]
    assert create.tool_calls[0].kind == "write" and create.edits[0].operation == "create"
    assert WRITES_TESTS in create.flags and EDITS_EXISTING_TEST not in create.flags
    assert REASONING_RESENT in create.flags and create.reasoning == "A new test file is purely additive."
    assert (create.usage.input, t.turns[4].usage.cached) == (3000, 2900)
    assert t.cwd == "/workspace/proj"
    # Pointing at the events folder itself works too.
    assert load_transcript(folder / "events").to_json()["turns"] == t.to_json()["turns"]


def test_openhands_v0_session_folder_of_numbered_events(tmp_path: Path) -> None:
    events = json.loads((FIXTURES / "openhands_v0_test_edit.json").read_text())
    folder = tmp_path / "session" / "events"
    folder.mkdir(parents=True)
    for e in events:
        (folder / f"{e['id']}.json").write_text(json.dumps(e))
    # 10.json must sort after 2.json: numeric order, not name order.
    extra = dict(events[0], id=10, message="second request", args={"content": "second request"})
    (folder / "10.json").write_text(json.dumps(extra))
    t = load_transcript(tmp_path / "session")
    assert t.format == "openhands"
    assert [x.text for x in t.turns][-1] == "second request"
    assert len(t.turns) == 8


def test_openhands_v1_without_base_state_still_loads(tmp_path: Path) -> None:
    dst = tmp_path / "conv"
    shutil.copytree(FIXTURES / "openhands_v1_conversation", dst)
    (dst / "base_state.json").unlink()
    t = load_transcript(dst)
    assert len(t.turns) == 5 and all(x.usage.input == 0 for x in t.turns)


def test_openhands_agent_message_claims_by_its_words(tmp_path: Path) -> None:
    events = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "add the field"}},
        {"id": 1, "source": "agent", "action": "message", "args": {"content": "I'll look at the file first."}},
        {"id": 2, "source": "agent", "action": "message", "args": {"content": "Summary: the line is already correct."}},
    ]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(events))
    t = load_transcript(p)
    assert [CLAIMS_DONE in x.flags for x in t.turns] == [False, False, True]
    assert t.last_claim() is t.turns[2]
