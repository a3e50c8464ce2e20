"""The Codex rollout loader on the project's fixture and on small hand-written rollouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.model import (
    CACHE_MISS,
    CLAIMS_DONE,
    COMPACTION,
    EDITS_EXISTING_TEST,
    EDITS_TEST_AFTER_FAILURE,
    PROMPT_CHANGED,
    REASONING_ONLY,
    REASONING_RESENT,
    TOOL_ERROR,
    TOUCH_DECLARED,
    WRITES_TESTS,
)
from tests.core.transcript.helpers import FIXTURES


@pytest.fixture(scope="module")
def rg():
    return load_transcript(FIXTURES / "codex_red_green.jsonl")


def test_roles_flags_and_order(rg) -> None:
    assert rg.format == "codex"
    assert [(t.role, t.flags) for t in rg.turns] == [
        ("system", ()),
        ("system", ()),  # AGENTS.md sent as a user message
        ("system", ()),  # environment context sent as a user message
        ("user", ()),
        ("assistant", (REASONING_RESENT, WRITES_TESTS, TOUCH_DECLARED)),
        ("tool", ()),
        ("assistant", (REASONING_RESENT,)),
        ("tool", (TOOL_ERROR,)),
        ("assistant", (REASONING_RESENT, WRITES_TESTS, EDITS_EXISTING_TEST, EDITS_TEST_AFTER_FAILURE)),
        ("tool", ()),
        ("assistant", (CACHE_MISS, PROMPT_CHANGED)),
        ("tool", ()),
        ("assistant", (CLAIMS_DONE,)),
    ]
    assert rg.task_text() == "Make parse_amount accept thousands separators like 1,000."


def test_apply_patch_gives_file_edits(rg) -> None:
    first = rg.turns[4]
    assert first.files_written == ("src/amount.py", "tests/test_commas.py")
    update, add = first.edits
    assert (update.operation, update.old, update.new) == ("patch", "    return int(text)", '    return int(text.replace(",", ""))')
    assert add.operation == "create" and add.existed is False
    assert add.new == 'from amount import parse_amount\n\n\ndef test_commas():\n    assert parse_amount("1,000") == 1000'
    assert rg.touch_declared() == ["src/amount.py", "tests/test_commas.py"]


def test_token_count_gives_usage_once_per_call(rg) -> None:
    calls = [t for t in rg.turns if t.role == "assistant"]
    assert [(c.usage.input, c.usage.cached) for c in calls] == [
        (12000, 0), (12600, 11900), (13100, 12500), (13500, 0), (13700, 13400)
    ]
    assert calls[0].usage.reasoning == 120
    assert calls[0].reasoning_chars == len("Plan: declare the writes, then patch the parser.")


def test_exit_code_from_exec_output(rg) -> None:
    assert TOOL_ERROR in rg.turns[7].flags and "1 failed" in rg.turns[7].text
    assert TOOL_ERROR not in rg.turns[11].flags


def _write(tmp_path: Path, items: list[dict]) -> Path:
    p = tmp_path / "rollout.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in items))
    return p


def _item(payload: dict) -> dict:
    return {"timestamp": "t", "type": "response_item", "payload": payload}


def _event(payload: dict) -> dict:
    return {"timestamp": "t", "type": "event_msg", "payload": payload}


META = {"timestamp": "t", "type": "session_meta", "payload": {"id": "x", "cwd": "/w"}}


def test_failed_patch_writes_nothing(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: tests/test_a.py\n@@\n-    assert x\n+    assert y\n*** End Patch"
    p = _write(tmp_path, [
        META,
        _item({"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": patch}),
        _item({"type": "custom_tool_call_output", "call_id": "c1",
               "output": json.dumps({"output": "apply_patch verification failed: context not found", "metadata": {"exit_code": 1}})}),
    ])
    t = load_transcript(p)
    assert t.turns[0].edits == ()
    assert WRITES_TESTS in t.turns[0].flags and EDITS_EXISTING_TEST not in t.turns[0].flags
    assert TOOL_ERROR in t.turns[1].flags


def test_patch_apply_end_supplies_edits_of_a_redacted_patch(tmp_path: Path) -> None:
    p = _write(tmp_path, [
        META,
        _item({"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "[REDACTED_INPUT len=99 sha=ab]"}),
        _event({"type": "patch_apply_end", "call_id": "c1", "success": True, "changes": {
            "/w/src/a.py": {"type": "update", "unified_diff": "@@ -1 +1 @@\n-old = 1\n+new = 2\n"},
            "/w/src/b.py": {"type": "add", "content": "print('b')\n"},
        }}),
        _item({"type": "custom_tool_call_output", "call_id": "c1", "output": "Success."}),
    ])
    t = load_transcript(p)
    a, b = t.turns[0].edits
    assert (a.path, a.operation, a.old, a.new) == ("/w/src/a.py", "patch", "old = 1", "new = 2")
    assert (b.path, b.operation, b.new) == ("/w/src/b.py", "create", "print('b')\n")


def test_reasoning_only_call_and_compaction(tmp_path: Path) -> None:
    p = _write(tmp_path, [
        META,
        _item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}),
        _item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking hard"}], "encrypted_content": "e"}),
        _event({"type": "token_count", "info": {"last_token_usage": {"input_tokens": 100, "cached_input_tokens": 0,
                                                                    "output_tokens": 4000}}}),
        {"timestamp": "t", "type": "compacted", "payload": {"message": "summary of the work so far"}},
        _event({"type": "context_compacted"}),
        _item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}),
    ])
    t = load_transcript(p)
    assert [x.role for x in t.turns] == ["user", "assistant", "system", "assistant"]
    assert REASONING_ONLY in t.turns[1].flags
    assert t.turns[2].flags == (COMPACTION,)  # the event repeats the line: one compaction turn
    assert t.turns[2].text == "summary of the work so far"


def test_shell_argv_and_local_shell_calls(tmp_path: Path) -> None:
    p = _write(tmp_path, [
        META,
        _item({"type": "function_call", "call_id": "c1", "name": "shell",
               "arguments": json.dumps({"command": ["bash", "-lc", "sed -i 's/a/b/' tests/test_x.py"]})}),
        _item({"type": "local_shell_call", "call_id": "c2", "status": "completed",
               "action": {"type": "exec", "command": ["apply_patch", "*** Begin Patch\n*** Add File: src/n.py\n+x = 1\n*** End Patch"]}}),
    ])
    t = load_transcript(p)
    (turn,) = t.turns
    assert [c.kind for c in turn.tool_calls] == ["shell", "shell"]
    assert turn.files_written == ("tests/test_x.py", "src/n.py")
    assert EDITS_EXISTING_TEST in turn.flags  # sed -i rewrites lines of a test it did not create


def test_token_count_closes_a_call_even_without_an_input_between(tmp_path: Path) -> None:
    """Two model calls back to back (the first produced only reasoning) are two turns."""
    usage = {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 9000}
    p = _write(tmp_path, [
        META,
        _item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
        _item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "long deliberation"}], "encrypted_content": "e"}),
        _event({"type": "token_count", "info": {"last_token_usage": usage}}),
        _item({"type": "reasoning", "summary": [], "encrypted_content": "f"}),
        _item({"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{\"cmd\": \"ls\"}"}),
        _event({"type": "token_count", "info": {"last_token_usage": dict(usage, input_tokens=200, output_tokens=20)}}),
    ])
    t = load_transcript(p)
    assert [x.role for x in t.turns] == ["user", "assistant", "assistant"]
    assert REASONING_ONLY in t.turns[1].flags and t.turns[1].usage.output == 9000
    assert t.turns[2].usage.input == 200 and t.turns[2].tool_calls[0].kind == "shell"


def test_user_messages_are_kept_when_events_do_not_match_them(tmp_path: Path) -> None:
    """If no response item matches any user_message event, mismatch proves nothing: keep them as user."""
    p = _write(tmp_path, [
        META,
        _item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>x</environment_context>"}]}),
        _item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the parser."}]}),
        _event({"type": "user_message", "message": "Fix the parser. [with an attachment note]"}),
    ])
    t = load_transcript(p)
    assert [x.role for x in t.turns] == ["system", "user"]
    assert t.task_text() == "Fix the parser."
