"""Qwen Code sessions: read as their own format, never as Claude Code; misreads refused by name (issue 42).

The real sample (tests/fixtures/transcripts/qwen-code) has no tool call; the
tool-call records below are the upstream record shape, written from Qwen
Code's own `ChatRecord` type (see that folder's SOURCE.txt).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.transcript import load_transcript, registry
from reviewui.core.transcript.detect import sniff
from reviewui.core.transcript.formats import FORMAT_LIST
from tests.core.transcript.helpers import FIXTURES

QWEN = FIXTURES / "qwen-code" / "agentsview_qwen0.15.6_session_lines1-3.jsonl"
CC = FIXTURES / "claude-code" / "session_task_subagent_lines35-57.jsonl"


def _rec(uuid: str, type_: str, ts: str, **kw: object) -> str:
    base = {"uuid": uuid, "parentUuid": None, "sessionId": "5b0c", "timestamp": ts, "type": type_,
            "cwd": "/w/app", "version": "0.20.0"}
    base.update(kw)
    return json.dumps(base)


def _session(tmp_path: Path) -> Path:
    p = tmp_path / "chat.jsonl"
    p.write_text("\n".join([
        _rec("1", "user", "2026-06-01T10:00:00.000Z", message={"role": "user", "parts": [{"text": "fix add"}]}),
        _rec("2", "assistant", "2026-06-01T10:00:02.000Z", model="qwen3-coder-plus", message={"role": "model", "parts": [
            {"text": "look first", "thought": True}, {"text": "Running the tests."},
            {"functionCall": {"id": "call_1", "name": "run_shell_command", "args": {"command": "pytest -q"}}}]},
            usageMetadata={"promptTokenCount": 900, "candidatesTokenCount": 30, "thoughtsTokenCount": 5,
                           "cachedContentTokenCount": 600, "totalTokenCount": 935}),
        _rec("3", "tool_result", "2026-06-01T10:00:05.000Z", message={"role": "user", "parts": [{"functionResponse": {
            "id": "call_1", "name": "run_shell_command", "response": {"output": "Command: pytest -q\nOutput: 1 failed\n"
                                                                      "Exit Code: 1"}}}]},
            toolCallResult={"callId": "call_1", "status": "success"}),
        _rec("4", "system", "2026-06-01T10:00:05.500Z", subtype="ui_telemetry", systemPayload={"uiEvent": {}}),
        _rec("5", "assistant", "2026-06-01T10:00:07.000Z", message={"role": "model", "parts": [
            {"functionCall": {"id": "call_2", "name": "replace", "args": {
                "file_path": "/w/app/calc.py", "old_string": "return a - b", "new_string": "return a + b"}}},
            {"functionCall": {"id": "call_3", "name": "write_file", "args": {
                "file_path": "/w/app/notes.txt", "content": "done\n"}}}]}),
        _rec("6", "tool_result", "2026-06-01T10:00:08.000Z", message={"role": "user", "parts": [{"functionResponse": {
            "id": "call_2", "name": "replace", "response": {"output": "Successfully modified file"}}}]},
            toolCallResult={"callId": "call_2", "status": "success"}),
        _rec("7", "tool_result", "2026-06-01T10:00:08.100Z", message={"role": "user", "parts": [{"functionResponse": {
            "id": "call_3", "name": "write_file", "response": {"error": "permission denied"}}}]},
            toolCallResult={"callId": "call_3", "status": "error"}),
        _rec("8", "assistant", "2026-06-01T10:00:09.000Z", message={"role": "model", "parts": [{"text": "Fixed."}]}),
    ]) + "\n")
    return p


def test_real_qwen_session_reads_as_qwen_code_with_reasoning_usage_and_times() -> None:
    t = load_transcript(QWEN)
    lines = [json.loads(x) for x in QWEN.read_text().splitlines()]
    assert t.format == "qwen-code" and t.cwd == lines[0]["cwd"]
    assert [x.role for x in t.turns] == ["user", "assistant"]  # the ui_telemetry record is no turn
    assert t.turns[0].text == lines[0]["message"]["parts"][0]["text"]
    reply = t.turns[1]
    parts = lines[2]["message"]["parts"]
    assert reply.text == parts[1]["text"] and reply.reasoning == parts[0]["text"]
    u = lines[2]["usageMetadata"]
    assert (reply.usage.input, reply.usage.cached, reply.usage.output, reply.usage.reasoning) == (
        u["promptTokenCount"], u["cachedContentTokenCount"], u["candidatesTokenCount"], u["thoughtsTokenCount"])
    assert [x.time for x in t.turns] == [lines[0]["timestamp"], lines[2]["timestamp"]]


def test_upstream_shape_tool_calls_results_commands_and_edits(tmp_path: Path) -> None:
    t = load_transcript(_session(tmp_path))
    assert t.format == "qwen-code"
    assert [x.role for x in t.turns] == ["user", "assistant", "tool", "assistant", "tool", "tool", "assistant"]
    cmds = [c for x in t.turns for c in x.commands]
    assert [(c.command, c.exit) for c in cmds] == [("pytest -q", 1)]
    edits = [(e.path, e.operation, e.old, e.new) for x in t.turns for e in x.edits]
    assert edits == [("/w/app/calc.py", "replace", "return a - b", "return a + b")]  # the failed write is no edit
    assert "tool-error" in t.turns[5].flags and t.turns[5].text == "permission denied"
    assert t.turns[1].usage.output == 35  # total != prompt + candidates: the thoughts are counted apart
    assert t.turns[2].time == "2026-06-01T10:00:05.000Z"


def test_without_its_own_format_a_qwen_session_is_refused_naming_claude_code_never_misread() -> None:
    s = sniff(QWEN)
    others = tuple(f for f in FORMAT_LIST if f.name != "qwen-code")
    with pytest.raises(ReviewError) as info:
        registry.detect(s, others)
    msg = str(info.value)
    assert "claude-code (lacks message.content)" in msg and "--transcript-format" in msg and "\n" not in msg


def test_a_file_two_formats_half_claim_is_refused_naming_both(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(CC.read_text() + QWEN.read_text())
    with pytest.raises(ReviewError, match=r"not surely any format: .*claude-code \(lacks message.content\)"
                                          r".*qwen-code \(lacks message.parts\)"):
        load_transcript(mixed)
    assert load_transcript(mixed, "claude-code").format == "claude-code"  # --transcript-format picks one


def test_cli_refusal_is_one_line_and_exit_2(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(CC.read_text() + QWEN.read_text())
    r = subprocess.run([sys.executable, "-m", "reviewui", "transcript", str(mixed)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "qwen-code" in r.stderr and "claude-code" in r.stderr
