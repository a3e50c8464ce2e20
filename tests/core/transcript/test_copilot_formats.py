"""Copilot Chat (VS Code) sessions on their real samples, and Copilot CLI's older timeline-only documents (issue 42).

Expected values are read from the files with simple rules independent of the
loader (the requests, their rounds' tool calls and results, the timestamps).
No published timeline-only Copilot CLI document exists (formats/copilot_cli.py
says where the shape comes from), so that variant is tested on the shape.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.formats.copilot_chat import replay
from reviewui.core.transcript.timestamps import iso_time
from tests.core.transcript.helpers import FIXTURES

CHAT = FIXTURES / "copilot-chat" / "git-ai_copilot_session_simple.json"
LOG = FIXTURES / "copilot-chat" / "git-ai_copilot_session_multiline.jsonl"


def _rounds(r: dict) -> list[dict]:
    return r["result"]["metadata"].get("toolCallRounds") or []


def test_copilot_chat_json_turns_rounds_edits_results_and_times() -> None:
    doc = json.loads(CHAT.read_text())
    t = load_transcript(CHAT)
    assert t.format == "copilot-chat"
    users = [x for x in t.turns if x.role == "user"]
    assert [u.text for u in users] == [r["message"]["text"] for r in doc["requests"]]
    assert [u.time for u in users] == [iso_time(r["timestamp"]) for r in doc["requests"]]
    replies = [x for x in t.turns if x.role == "assistant"]
    assert [x.text for x in replies] == [rd["response"] for r in doc["requests"] for rd in _rounds(r)]
    calls = [c for x in t.turns for c in x.tool_calls]
    want = [tc for r in doc["requests"] for rd in _rounds(r) for tc in rd["toolCalls"]]
    assert [(c.name, c.id) for c in calls] == [(tc["name"], tc["id"]) for tc in want]
    args = json.loads(want[0]["arguments"])
    edits = [e for x in t.turns for e in x.edits]
    assert [(e.path, e.operation, e.old, e.new) for e in edits] == [
        (args["filePath"], "replace", args["oldString"], args["newString"])]
    tools = [x for x in t.turns if x.role == "tool"]
    results = {k for r in doc["requests"] for k in r["result"]["metadata"].get("toolCallResults", {})}
    assert len(tools) == len(results) == 2
    assert tools[0].text.startswith("The following files were successfully edited:")
    assert "claims-done" in replies[-1].flags


def test_copilot_chat_operation_log_is_replayed_then_read() -> None:
    ops = [json.loads(ln) for ln in LOG.read_text().splitlines() if ln.strip()]
    pushed = [r for o in ops if o.get("kind") == 2 and o["k"] == ["requests"] for r in o["v"]]
    assert pushed and ops[0]["kind"] == 0
    want = [r["message"]["text"] for r in ops[0]["v"]["requests"] + pushed]
    state = replay(ops)
    assert [r["message"]["text"] for r in state["requests"]] == want
    assert state["inputState"]["inputText"] == [o for o in ops if o.get("k") == ["inputState", "inputText"]][-1]["v"]
    t = load_transcript(LOG)
    assert t.format == "copilot-chat"
    assert [x.text for x in t.turns if x.role == "user"] == [r["message"]["text"] for r in state["requests"]]
    calls = [c for x in t.turns for c in x.tool_calls]
    assert [(c.name, c.kind) for c in calls] == [("read_file", "read"), ("insert_edit_into_file", "edit")]
    sketch = [e for x in t.turns for e in x.edits]
    assert [(e.path.rsplit("/", 1)[-1], e.operation) for e in sketch] == [("jokes.csv", "shell")]
    assert t.turns[-1].time == iso_time(pushed[-1]["timestamp"])


def test_copilot_chat_response_parts_without_rounds_terminal_and_edit_group(tmp_path: Path) -> None:
    doc = json.loads(CHAT.read_text())
    req = doc["requests"][1]
    req["result"] = {}  # an ask-mode request: only what the panel showed
    req["response"].insert(0, {"kind": "toolInvocationSerialized", "toolId": "run_in_terminal", "toolCallId": "c1",
                               "toolSpecificData": {"kind": "terminal", "commandLine": {"original": "npm test"}}})
    doc["requests"] = [req]
    p = tmp_path / "chat.json"
    p.write_text(json.dumps(doc))
    t = load_transcript(p)
    reply = next(x for x in t.turns if x.role == "assistant")
    assert [(c.name, c.kind) for c in reply.tool_calls] == [("run_in_terminal", "shell"), ("copilot_replaceString", "edit")]
    assert [c.command for c in reply.commands] == ["npm test"]
    assert [e.path.rsplit("/", 1)[-1] for e in reply.edits] == ["index.ts"]
    said = "".join(p["value"] if "value" in p else "index.ts" for p in req["response"]
                   if p.get("kind") in (None, "inlineReference"))
    assert reply.text == said and said.endswith("in line 10 of your index.ts file.")


def _timeline() -> dict:
    return {
        "sessionId": "3b0f6c1e-7d1a-4a39-9c5e-2f1d0b6a8e11", "startTime": "2025-10-08T21:10:16.398Z",
        "chatMessages": [],
        "timeline": [
            {"id": "1", "timestamp": "2025-10-08T21:10:20.000Z", "type": "user", "text": "fix the failing test"},
            {"id": "2", "timestamp": "2025-10-08T21:10:25.000Z", "type": "copilot", "text": "Let me run it."},
            {"id": "3", "timestamp": "2025-10-08T21:10:26.000Z", "type": "tool_call_requested", "callId": "c1",
             "name": "bash", "toolTitle": "bash", "arguments": {"command": "pytest -q", "description": "run"}},
            {"id": "4", "timestamp": "2025-10-08T21:10:31.000Z", "type": "tool_call_completed", "callId": "c1",
             "name": "bash", "toolTitle": "bash", "arguments": {"command": "pytest -q"},
             "result": {"type": "success", "log": "1 failed, 3 passed\n<exited with exit code 1>"}},
            {"id": "5", "timestamp": "2025-10-08T21:10:40.000Z", "type": "tool_call_completed", "callId": "c2",
             "toolTitle": "str_replace_editor",
             "arguments": {"command": "str_replace", "path": "/w/tests/test_a.py", "old_str": "== 2", "new_str": "== 3"},
             "result": {"type": "success", "log": "File /w/tests/test_a.py updated"}},
            {"id": "6", "timestamp": "2025-10-08T21:10:41.000Z", "type": "tool_call_completed", "callId": "c3",
             "toolTitle": "str_replace_editor",
             "arguments": {"command": "str_replace", "path": "/w/a.py", "old_str": "x", "new_str": "y"},
             "result": {"type": "failure", "log": "No replacement was performed"}},
            {"id": "7", "timestamp": "2025-10-08T21:10:42.000Z", "type": "info", "text": "Model changed 3 times"},
            {"id": "8", "timestamp": "2025-10-08T21:10:50.000Z", "type": "copilot", "text": "Done: the test passes."},
        ],
    }


def test_copilot_cli_timeline_only_document_turns_calls_results_edits_and_times(tmp_path: Path) -> None:
    p = tmp_path / "session_3b0f.json"
    p.write_text(json.dumps(_timeline(), indent=2))
    t = load_transcript(p)
    assert t.format == "copilot-cli"
    assert [x.role for x in t.turns] == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "system",
                                         "assistant"]
    assert t.turns[0].text == "fix the failing test" and t.turns[0].time == "2025-10-08T21:10:20.000Z"
    cmds = [c for x in t.turns for c in x.commands]
    assert [(c.command, c.exit) for c in cmds] == [("pytest -q", 1)]
    edits = [e for x in t.turns for e in x.edits]
    assert [(e.path, e.old, e.new) for e in edits] == [("/w/tests/test_a.py", "== 2", "== 3")]  # the failed one dropped
    assert "tool-error" in t.turns[6].flags and t.turns[7].text == "info: Model changed 3 times"
    assert "claims-done" in t.turns[-1].flags


def test_copilot_cli_document_with_chat_messages_still_reads_them(tmp_path: Path) -> None:
    doc = _timeline()
    doc["chatMessages"] = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    p = tmp_path / "s.json"
    p.write_text(json.dumps(doc))
    assert [x.text for x in load_transcript(p).turns] == ["hello", "hi"]


def test_a_timeline_without_session_id_is_refused_naming_it(tmp_path: Path) -> None:
    doc = _timeline()
    del doc["sessionId"]
    doc["chatMessages"] = None
    p = tmp_path / "s.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(ReviewError, match="cannot tell the format|not surely"):
        load_transcript(p)


def test_a_chat_sessions_own_id_is_named_for_the_authorship_notes() -> None:
    from reviewui.core.transcript.session_ids import session_ids

    first = json.loads(LOG.read_text().splitlines()[0])
    assert session_ids(LOG) == {first["v"]["sessionId"]}
    assert session_ids(CHAT) == {json.loads(CHAT.read_text())["sessionId"]}
