"""GitHub Copilot CLI sessions: the events log (`~/.copilot/session-state/<id>/events.jsonl`) and the older JSON.

Every line of the events log is `{type, data, id, timestamp, parentId}`
with dotted types: `session.start` (its `context.cwd`), `user.message`,
`assistant.message` (`content`, `toolRequests[{toolCallId, name,
arguments}]`, `reasoningText`, `outputTokens`, and `parentToolCallId` on a
subagent's lines), `assistant.reasoning`, `assistant.usage`,
`tool.execution_start` and `tool.execution_complete` (`success`,
`result.content`, `error`). Streaming deltas, hooks and turn markers are
not turns. The detector keys on lines whose `type` is one of those dotted
names and whose `data` is an object. The older session JSON
(`history-session-state/session_*.json`) is `{sessionId, startTime,
chatMessages, timeline}`, its `chatMessages` an OpenAI-shaped list; the
detector keys on a `chatMessages` (or, with `sessionId`, a `timeline`) list.

Some older documents keep `chatMessages` empty and the conversation only in
`timeline`: entries `{id, timestamp, type, …}` where `user` and `copilot`
carry `text`, `tool_call_requested` and `tool_call_completed` carry
`callId`, `name`/`toolTitle`, `arguments` and (completed) `result` `{type:
success|failure, log}`, and `info`/`warning`/`error` are notices. No
published sample of this variant was found (searched: the code and issue
indexes for `history-session-state` documents, `"timeline"` beside
`"chatMessages"`, `tool_call_completed` with `toolTitle`), and the Copilot
CLI's source is not public; the shape is the one third-party readers of
these files rely on (a `type: tool_call_completed` entry with `toolTitle`,
`arguments`, `timestamp` and `result.log`; see tests/fixtures/transcripts/
copilot-cli/SOURCE.txt), read leniently: an entry of another `type` is
skipped, and a call seen only completed is still a call.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from reviewui.core.transcript.builder import SHAPE_ERRORS, Draft, Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.formats._shape import document
from reviewui.core.transcript.model import Usage
from reviewui.core.transcript.normalize import content_text
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions, keyed
from reviewui.core.transcript.source import LineCounter, iter_jsonl
from reviewui.core.transcript.timestamps import iso_time
from reviewui.core.transcript.tools import interpret_call

NAME = "copilot-cli"
_TYPES = {
    "session.start", "session.resume", "session.info", "session.model_change", "session.shutdown", "session.error",
    "user.message", "system.message", "assistant.message", "assistant.turn_start", "assistant.turn_end",
    "tool.execution_start", "tool.execution_complete", "assistant.reasoning", "hook.start", "hook.end",
}
_EXIT = re.compile(r"<exited with exit code (-?\d+)>")


def _is_event(o: dict[str, Any]) -> bool:
    return o.get("type") in _TYPES and type(o.get("data")) is dict


def _dotted(o: dict[str, Any]) -> bool:
    """A line of the events log: a dotted `type` (newer builds add types) with its `data`."""
    t = o.get("type")
    return isinstance(t, str) and "." in t and "data" in o


def _old_json(doc: Any) -> bool:
    return isinstance(doc, dict) and "sessionId" in doc and (
        isinstance(doc.get("chatMessages"), list) or isinstance(doc.get("timeline"), list))


def _timeline_only(doc: Any) -> bool:
    """An older document whose conversation is only in its `timeline` (`chatMessages` empty or absent)."""
    return not doc.get("chatMessages") and isinstance(doc.get("timeline"), list) and bool(doc["timeline"])


def detect(s: Sniff) -> Claim | None:
    """JSONL of `{type: session.*|user.message|assistant.*|tool.execution_*, data: {...}}`, every line a dotted
    event; or the older `{sessionId, chatMessages}` document."""
    if s.is_dir or s.is_zip:
        return None
    if s.document is not None and (not s.objects or len(s.objects) == 1):
        doc = s.doc
        chat = isinstance(doc, dict) and isinstance(doc.get("chatMessages"), list)
        timeline = isinstance(doc, dict) and isinstance(doc.get("timeline"), list) and "sessionId" in doc
        return keyed(chat or timeline, {"`chatMessages` or `timeline` list": True, "`sessionId`": _old_json(doc)})
    return keyed(any(_is_event(o) for o in s.objects), {
        "session events ({type: user.message|assistant.*|…, data})": True,
        "every line a dotted event with `data`": all(_dotted(o) for o in s.objects)})


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the events log line by line (or the older JSON's chat messages)."""
    if s.document is not None and _old_json(s.doc):
        import reviewui.core.transcript.messages as messages  # on load, not import: see formats/__init__.py

        notes: list[str] = []
        doc = document(path, s, counter, notes)
        if _timeline_only(doc):
            run = _load_timeline(doc["timeline"], counter)
            run.notes[:0] = notes
            return run
        run = messages.load_document({"messages": doc.get("chatMessages") or []}, "openai", counter)
        run.notes[:0] = notes
        return run
    st = _State()
    for lineno, d in iter_jsonl(path, counter):
        data = d.get("data")
        if type(data) is not dict:
            continue
        st.run.stamp = iso_time(d.get("timestamp"))
        try:
            _event(st, str(d.get("type") or ""), data, lineno)
        except SHAPE_ERRORS:
            counter.skipped += 1
    return st.run


class _State:
    def __init__(self) -> None:
        self.run = Run()
        self.last: Draft | None = None  # the latest assistant turn
        self.started: Draft | None = None  # the turn holding calls seen only by their execution_start


def _event(st: _State, t: str, data: dict[str, Any], line: int) -> None:
    run = st.run
    if t == "session.start" or t == "session.resume":
        ctx = data.get("context")
        if isinstance(ctx, dict) and isinstance(ctx.get("cwd"), str):
            run.cwd = ctx["cwd"]
    elif t == "user.message":
        run.new("user", line).add_text(content_text(data.get("content")))
    elif t == "system.message":
        run.new("system", line).add_text(content_text(data.get("content")))
    elif t == "assistant.message":
        _assistant(st, data, line)
    elif t == "assistant.reasoning":
        if st.last is not None and isinstance(data.get("content"), str) and data["content"]:
            st.last.add_reasoning(data["content"])
    elif t == "assistant.usage":
        if st.last is not None:
            st.last.usage = _usage(data, st.last.usage)
    elif t == "tool.execution_start":
        cid = data.get("toolCallId")
        if isinstance(cid, str) and run.call(cid) is None:
            # A call the log shows starting but whose request is not in it (a cut file, an older build):
            # consecutive ones are one turn's parallel calls.
            parent = data.get("parentToolCallId") if isinstance(data.get("parentToolCallId"), str) else None
            dr = st.started
            if dr is None or run.last is not dr or dr.group != parent:
                dr = st.started = run.new("assistant", line)
                dr.group = parent
            st.last = dr
            call, edits = interpret_call(str(data.get("toolName") or "tool"), data.get("arguments"), cid)
            run.add_call(dr, call, edits)
    elif t == "tool.execution_complete":
        _complete(st, data, line)
    elif t == "session.error":
        run.notice("error: " + content_text(data.get("message") or data.get("errorType")), line)


def _assistant(st: _State, data: dict[str, Any], line: int) -> None:
    dr = st.last = st.run.new("assistant", line)
    parent = data.get("parentToolCallId")
    dr.group = parent if isinstance(parent, str) else None
    dr.add_text(content_text(data.get("content")))
    text = data.get("reasoningText")
    dr.add_reasoning(text if isinstance(text, str) else None, present=bool(data.get("reasoningOpaque")))
    out = data.get("outputTokens")
    if type(out) is int and out > 0:
        dr.usage = Usage(0, 0, out)
    for r in data.get("toolRequests") or []:
        if not isinstance(r, dict):
            continue
        cid = r.get("toolCallId") if isinstance(r.get("toolCallId"), str) else None
        call, edits = interpret_call(str(r.get("name") or "tool"), r.get("arguments"), cid)
        st.run.add_call(dr, call, edits)


def _complete(st: _State, data: dict[str, Any], line: int) -> None:
    dr = st.run.new("tool", line)
    parent = data.get("parentToolCallId")
    dr.group = parent if isinstance(parent, str) else None
    result = data.get("result")
    err = data.get("error")
    text = content_text(result.get("content")) if isinstance(result, dict) else ""
    if not text and err is not None:
        text = content_text(err.get("message") if isinstance(err, dict) else err)
    dr.add_text(text)
    cid = data.get("toolCallId")
    found = st.run.result(dr, cid)
    if data.get("success") is False:
        dr.is_error = True
        st.run.call_failed(cid)
    code = _EXIT.search(text[-200:]) if found is not None and found[1].kind == "shell" else None
    if code is not None:
        dr.exit_code = int(code.group(1))


def _load_timeline(entries: list[Any], counter: LineCounter) -> Run:
    """Read an older document's `timeline` (its `chatMessages` empty) into drafts."""
    st = _State()
    for i, e in enumerate(entries, start=1):
        if not isinstance(e, dict):
            counter.skipped += 1
            continue
        st.run.stamp = iso_time(e.get("timestamp"))
        try:
            _entry(st, e, i)
        except SHAPE_ERRORS:
            counter.skipped += 1
    return st.run


def _entry(st: _State, e: dict[str, Any], line: int) -> None:
    run, t = st.run, e.get("type")
    text = e.get("text") if isinstance(e.get("text"), str) else None
    if t == "user":
        st.last = None
        run.new("user", line).add_text(text)
    elif t == "copilot":
        st.last = run.new("assistant", line)
        st.last.add_text(text)
    elif t in ("tool_call_requested", "tool_call_completed"):
        cid = e.get("callId") if isinstance(e.get("callId"), str) else None
        if cid is None or run.call(cid) is None:
            dr = st.last if st.last is not None and run.last is st.last else None
            if dr is None:
                dr = st.last = run.new("assistant", line)
            name = e.get("name") or e.get("toolTitle") or "tool"
            call, edits = interpret_call(str(name), e.get("arguments"), cid)
            run.add_call(dr, call, edits)
        if t == "tool_call_completed":
            _timeline_result(st, e, cid, line)
    elif t in ("info", "warning", "error") and text:
        run.notice(f"{t}: {text}", line)


def _timeline_result(st: _State, e: dict[str, Any], cid: str | None, line: int) -> None:
    raw = e.get("result")
    result: dict[str, Any] = raw if isinstance(raw, dict) else {}
    shown = result.get("log")
    log: str = shown if isinstance(shown, str) else content_text(raw) if raw is not None else ""
    dr = st.run.new("tool", line)
    dr.add_text(log)
    found = st.run.result(dr, cid)
    if result.get("type") in ("failure", "error", "rejected", "denied"):
        dr.is_error = True
        st.run.call_failed(cid)
    code = _EXIT.search(log[-200:]) if found is not None and found[1].kind == "shell" else None
    if code is not None:
        dr.exit_code = int(code.group(1))
    st.last = None  # what the agent says next is a new turn


def _usage(data: dict[str, Any], prev: Usage | None) -> Usage:
    def n(key: str) -> int:
        v = data.get(key)
        return v if type(v) is int and v > 0 else 0
    # inputTokens is the whole prompt: session.shutdown's totals show it as input + cache reads + cache writes.
    total = n("inputTokens")
    return Usage(total, min(n("cacheReadTokens"), total), n("outputTokens") or (prev.output if prev else 0))


FORMAT = Format(NAME, detect, load, "copilot-cli/session-medium_events_without_system_message.jsonl",
                ("copilot", "github-copilot-cli", "copilot_cli"))
"""Registered in formats/__init__.py."""
