"""Qwen Code session JSONL (`~/.qwen/projects/<cwd>/chats/<session>.jsonl`).

Each line is a `ChatRecord` (upstream: QwenLM/qwen-code,
packages/core/src/services/chatRecordingService.ts): `{uuid, parentUuid,
sessionId, timestamp, type: user|assistant|tool_result|system, subtype?,
cwd, version, gitBranch?, message?: Content, usageMetadata?, model?,
toolCallResult?: {callId, status, resultDisplay}, systemPayload?}`. The
`message` is a Gemini `Content`, `{role: user|model, parts}`: a part is
`{text}`, `{text, thought: true}` (reasoning), `{functionCall: {id, name,
args}}` or `{functionResponse: {id, name, response: {output|error}}}`.
Tool results are `tool_result` records (older builds wrote them as `user`
records holding only functionResponse parts); each is a tool turn,
`toolCallResult.status` `error`/`cancelled` marks it failed, a shell
result says `Exit Code: N`. Tools are Gemini CLI's (`run_shell_command`,
`write_file`, `replace`/`edit`, `read_file`). `system` records (telemetry,
slash commands, compression checkpoints) are not turns.

The envelope is Claude Code's (uuid, parentUuid, sessionId, cwd,
version), so the two detectors tell the files apart by `message`: Qwen
Code requires `message.parts`, Claude Code `message.content`. Real
samples: one published session without tool calls (tests/fixtures/
transcripts/qwen-code/SOURCE.txt); no published sample with tool calls or
edits was found, so those are tested on the upstream record shape.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from reviewui.core.transcript.builder import SHAPE_ERRORS, Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions, claim
from reviewui.core.transcript.model import Usage
from reviewui.core.transcript.normalize import content_text
from reviewui.core.transcript.source import LineCounter, iter_jsonl
from reviewui.core.transcript.timestamps import iso_time
from reviewui.core.transcript.tools import interpret_call

NAME = "qwen-code"
_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
_EXIT = re.compile(r"Exit Code: (-?\d+)")
_FAILED = frozenset({"error", "cancelled"})


def is_record(o: dict[str, Any]) -> bool:
    """True for a line with Qwen Code's (and Claude Code's) record envelope and one of its types."""
    return o.get("type") in _TYPES and isinstance(o.get("sessionId"), str) and ("uuid" in o or "timestamp" in o)


def has_parts(o: dict[str, Any]) -> bool:
    """True for a record whose `message` is a Gemini Content (`parts`), not an Anthropic message."""
    m = o.get("message")
    return isinstance(m, dict) and isinstance(m.get("parts"), list)


def detect(s: Sniff) -> Claim | None:
    """Records with the session envelope (`sessionId`, `uuid`) whose `message` holds `parts`."""
    if s.is_dir or s.is_zip or (s.document is not None and len(s.objects) < 2):
        return None
    records = [o for o in s.objects if is_record(o)]
    messages = [o for o in records if isinstance(o.get("message"), dict)]
    return claim({"session envelope (sessionId, uuid)": bool(records),
                  "message.parts": bool(messages) and all(has_parts(o) for o in messages)})


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the session line by line (records in file order: a resumed session appends)."""
    run = Run()
    for lineno, o in iter_jsonl(path, counter):
        if run.cwd is None and isinstance(o.get("cwd"), str):
            run.cwd = o["cwd"]
        run.stamp = iso_time(o.get("timestamp"))
        try:
            _record(run, o, lineno)
        except SHAPE_ERRORS:
            counter.skipped += 1
    return run


def _parts(o: dict[str, Any]) -> list[dict[str, Any]]:
    m = o.get("message")
    parts = m.get("parts") if isinstance(m, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _record(run: Run, o: dict[str, Any], line: int) -> None:
    t = o.get("type")
    parts = _parts(o)
    responses = [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]
    if t == "tool_result" or (t == "user" and responses and len(responses) == len(parts)):
        _results(run, o, responses, line)
    elif t == "user":
        run.new("user", line).add_text("".join(str(p.get("text") or "") for p in parts if "text" in p))
    elif t == "assistant":
        _assistant(run, o, parts, line)


def _assistant(run: Run, o: dict[str, Any], parts: list[dict[str, Any]], line: int) -> None:
    dr = run.new("assistant", line)
    if o.get("isSidechain") and isinstance(o.get("agentId"), str):
        dr.group = o["agentId"]
    for k, p in enumerate(parts):
        if "text" in p:
            if p.get("thought"):
                dr.add_reasoning(str(p.get("text") or ""), present=True)
            else:
                dr.add_text(str(p.get("text") or ""))
        fc = p.get("functionCall")
        if isinstance(fc, dict):
            cid = fc.get("id") if isinstance(fc.get("id"), str) else f"{line}-{k}"
            call, edits = interpret_call(str(fc.get("name") or "tool"), fc.get("args"), cid)
            run.add_call(dr, call, edits)
    dr.usage = _usage(o.get("usageMetadata"))


def _results(run: Run, o: dict[str, Any], responses: list[dict[str, Any]], line: int) -> None:
    meta = o.get("toolCallResult")
    info: dict[str, Any] = meta if isinstance(meta, dict) else {}
    if not responses:
        shown = info.get("resultDisplay")
        responses = [{"id": info.get("callId"), "response": {"output": shown if isinstance(shown, str) else ""}}]
    for fr in responses:
        cid = fr.get("id") if isinstance(fr.get("id"), str) else info.get("callId")
        resp = fr.get("response")
        out: Any = None
        if isinstance(resp, dict):
            out = resp.get("output") if resp.get("output") is not None else resp.get("error")
        text = out if isinstance(out, str) else content_text(out) if out is not None else ""
        res = run.new("tool", line)
        res.add_text(text)
        found = run.result(res, cid)
        if info.get("status") in _FAILED or (isinstance(resp, dict) and resp.get("error") is not None):
            res.is_error = True
            run.call_failed(cid)
        code = _EXIT.search(text) if found is not None and found[1].kind == "shell" else None
        if code is not None:
            res.exit_code = int(code.group(1))


def _usage(u: Any) -> Usage | None:
    if not isinstance(u, dict):
        return None

    def n(key: str) -> int:
        v = u.get(key)
        return v if type(v) is int and v > 0 else 0
    # promptTokenCount includes the cached part. Through Qwen's OpenAI-compatible converter the
    # candidates already hold the thoughts (total = prompt + candidates); Gemini counts them apart.
    prompt, cand, thoughts = n("promptTokenCount"), n("candidatesTokenCount"), n("thoughtsTokenCount")
    out = cand if n("totalTokenCount") == prompt + cand else cand + thoughts
    return Usage(prompt, min(n("cachedContentTokenCount"), prompt), out, thoughts)


FORMAT = Format(NAME, detect, load, "qwen-code/agentsview_qwen0.15.6_session_lines1-3.jsonl", ("qwen", "qwen_code"))
"""Registered in formats/__init__.py."""
