"""Gemini CLI's 2026 JSONL session log (`chats/session-*.jsonl`), read as upstream's ChatRecordingService writes it.

No real public JSONL session was found (see the report of issue 28), so the
lines here are built to the record shapes of upstream
`packages/core/src/services/chatRecordingService.ts` (`loadConversationRecord`):
a header `{sessionId, projectHash, startTime, lastUpdated, kind}`; message
records keyed by `id`, a re-written id replacing its earlier copy in place;
`{"$set": {...}}` metadata updates, whose `messages` (the injected
`<session_context>` turn, a resumed history) is a checkpoint of the whole list;
`{"$rewindTo": id}` dropping that message and everything after it; and, in
the newest versions, `{"$patch": {id, content, toolCalls: [{id, result}]}}`
updating a message in place (`updates` several, `removeIds` dropping some,
`orderIds` moving some to the end in that order).
"""

from __future__ import annotations

import json
from pathlib import Path

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.detect import sniff
from reviewui.core.transcript.formats import FORMAT_LIST

HEADER = {"sessionId": "5ec95d33-d405-4b82-9be5-8080824363b5", "projectHash": "af06" * 16,
          "startTime": "2026-09-01T09:12:33.104Z", "lastUpdated": "2026-09-01T09:12:33.104Z", "kind": "main"}
CONTEXT = {"id": "ctx", "timestamp": "2026-09-01T09:12:33.200Z", "type": "user",
           "content": [{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"}]}


def _user(mid: str, text: str, at: str) -> dict:
    return {"id": mid, "timestamp": at, "type": "user", "content": [{"text": text}]}


def _gemini(mid: str, at: str, text: str, calls: list[dict] | None = None, tokens: dict | None = None) -> dict:
    m: dict = {"id": mid, "timestamp": at, "type": "gemini", "content": text, "model": "gemini-3-pro-preview"}
    if calls is not None:
        m["toolCalls"] = calls
    if tokens is not None:
        m["tokens"] = tokens
    return m


def _shell(cid: str, status: str, output: str | None) -> dict:
    c: dict = {"id": cid, "name": "run_shell_command", "args": {"command": "pytest -q"}, "status": status}
    if output is not None:
        c["result"] = [{"functionResponse": {"id": cid, "name": "run_shell_command", "response": {"output": output}}}]
    return c


def _write(tmp_path: Path, records: list[dict]) -> Path:
    p = tmp_path / "session-2026-09-01T09-12-5ec95d33.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return p


def test_checkpointed_messages_then_records_and_a_rewritten_message_in_its_place(tmp_path: Path) -> None:
    out = "3 passed in 0.02s\nExit Code: 0"
    path = _write(tmp_path, [
        HEADER,
        {"$set": {"messages": [CONTEXT], "lastUpdated": "2026-09-01T09:12:33.201Z"}},
        _user("u1", "run the tests", "2026-09-01T09:12:40.000Z"),
        _gemini("g1", "2026-09-01T09:12:41.402Z", "Running them.", [_shell("run_shell_command-1", "executing", None)]),
        {"$set": {"lastUpdated": "2026-09-01T09:12:45.000Z"}},
        # the same message written again when its call finished: the last copy wins, where the first stood
        _gemini("g1", "2026-09-01T09:12:41.402Z", "Running them.", [_shell("run_shell_command-1", "success", out)],
                {"input": 12345, "output": 218, "cached": 11000, "thoughts": 64, "tool": 0, "total": 12627}),
        _user("u2", "thanks", "2026-09-01T09:13:00.000Z"),
    ])
    s = sniff(path)
    assert [f.name for f in FORMAT_LIST if f.detect(s)] == ["gemini-cli"]
    t = load_transcript(path)
    assert t.format == "gemini-cli"
    assert [(x.role, x.text) for x in t.turns] == [
        ("user", CONTEXT["content"][0]["text"]), ("user", "run the tests"), ("assistant", "Running them."),
        ("tool", out), ("user", "thanks"),
    ]
    reply = t.turns[2]
    assert reply.usage.input == 12345 and reply.usage.output == 218 + 64
    assert [(c.command, c.exit) for c in reply.commands] == [("pytest -q", 0)]
    assert reply.time == "2026-09-01T09:12:41.402Z"


def test_a_later_messages_checkpoint_replaces_the_list_and_a_rewind_drops_from_its_target_on(tmp_path: Path) -> None:
    path = _write(tmp_path, [
        HEADER,
        _user("u1", "first question", "2026-09-01T10:00:01.000Z"),
        _gemini("g1", "2026-09-01T10:00:02.000Z", "a wrong answer"),
        # a resumed session writes its history back as one checkpoint
        {"$set": {"messages": [CONTEXT, _user("u1", "first question", "2026-09-01T10:00:01.000Z")]}},
        _gemini("g2", "2026-09-01T10:00:05.000Z", "the right answer"),
        _user("u3", "oops, wrong prompt", "2026-09-01T10:00:06.000Z"),
        _gemini("g3", "2026-09-01T10:00:07.000Z", "answer to the wrong prompt"),
        {"$rewindTo": "u3"},
        _user("u4", "the prompt I meant", "2026-09-01T10:00:09.000Z"),
    ])
    t = load_transcript(path)
    assert [x.text for x in t.turns] == [
        CONTEXT["content"][0]["text"], "first question", "the right answer", "the prompt I meant",
    ]


def test_patches_update_a_message_in_place_remove_and_reorder(tmp_path: Path) -> None:
    out = "ok\nExit Code: 0"
    path = _write(tmp_path, [
        HEADER,
        _user("u1", "run the tests", "2026-09-01T11:00:01.000Z"),
        _gemini("g1", "2026-09-01T11:00:02.000Z", "", [_shell("run_shell_command-1", "executing", None)]),
        {"$patch": {"id": "g1", "content": "Ran them.", "toolCalls": [
            {"id": "run_shell_command-1", "result": _shell("run_shell_command-1", "success", out)["result"]}]}},
        _user("u2", "a note", "2026-09-01T11:00:05.000Z"),
        _user("u3", "another", "2026-09-01T11:00:06.000Z"),
        {"$patch": {"updates": [{"id": "u3", "content": [{"text": "another, edited"}]}], "removeIds": ["u2"]}},
        _user("u4", "last", "2026-09-01T11:00:07.000Z"),
        {"$patch": {"orderIds": ["u3"]}},  # u3 moved to the end
    ])
    t = load_transcript(path)
    assert [x.text for x in t.turns] == ["run the tests", "Ran them.", out, "last", "another, edited"]
    assert [(c.command, c.exit) for c in t.turns[1].commands] == [("pytest -q", 0)]


def test_hostile_ids_and_patches_are_passed_over_not_a_crash(tmp_path: Path) -> None:
    path = _write(tmp_path, [
        HEADER,
        {"id": ["not", "a", "key"], "timestamp": "2026-09-01T12:00:00.000Z", "type": "user", "content": "odd id"},
        {"$set": {"messages": [{"id": {"x": 1}, "timestamp": "t", "type": "user", "content": "odder"}]}},
        {"$patch": {"id": ["x"], "removeIds": [["y"]], "orderIds": [{"z": 1}], "updates": "nope"}},
        {"$patch": {"updates": [{"id": "u9", "toolCalls": "nope"}]}},
        _user("u9", "still read", "2026-09-01T12:00:01.000Z"),
    ])
    assert [x.text for x in load_transcript(path).turns] == ["odder", "still read"]
