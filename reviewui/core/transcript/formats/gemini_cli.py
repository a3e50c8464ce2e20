"""Gemini CLI session logs: the 2025 JSON (`~/.gemini/tmp/<hash>/chats/session-*.json`) and the 2026 JSONL.

The JSON is one object `{sessionId, projectHash, startTime, lastUpdated,
messages}`; the JSONL starts with a line of those header fields and then
appends message records, `{"$set": {...}}` updates (a `messages` list there
is a checkpoint of the whole conversation) and, when a message is written
again (its tool calls finished), the same `id` once more: the last copy wins,
in the first one's place; `{"$rewindTo": id}` drops that message and all
after it, and (newest versions) `{"$patch": {...}}` updates a message in
place, removes or reorders some, as upstream's `loadConversationRecord`
reads them. A message is `{id, timestamp, type: user|gemini|info|error|
warning, content (a string or Part[]), thoughts[{subject, description}],
tokens{input, output, cached, thoughts, tool, total}, model, toolCalls[{id,
name, args, result[{functionResponse{response{output|error}}}], status}]}`.
Each tool call's result becomes its own tool turn; `write_file` and
`replace` are edits, `run_shell_command` a shell command (its output says
`Exit Code: N` in most versions), thoughts the reasoning. The detector keys
on `sessionId` with `projectHash` (or messages typed `user`/`gemini`
without a `role`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from reviewui.core.transcript.builder import SHAPE_ERRORS, Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.formats._shape import document
from reviewui.core.transcript.model import Usage
from reviewui.core.transcript.normalize import content_text
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions, keyed
from reviewui.core.transcript.source import LineCounter, iter_jsonl
from reviewui.core.transcript.timestamps import iso_time
from reviewui.core.transcript.tools import interpret_call

NAME = "gemini-cli"
_TYPES = {"user", "gemini", "info", "error", "warning"}
_EXIT = re.compile(r"Exit Code: (-?\d+)")
_FAILED = {"error", "cancelled"}


def _message(o: Any) -> bool:
    return isinstance(o, dict) and o.get("type") in _TYPES and "role" not in o and ("id" in o or "timestamp" in o)


def is_session(doc: Any) -> bool:
    """True for a session object: `sessionId` and `projectHash`, or `messages` typed user/gemini with no `role`."""
    if not isinstance(doc, dict):
        return False
    if "sessionId" in doc and "projectHash" in doc:
        return True
    msgs = doc.get("messages")
    return isinstance(msgs, list) and bool(msgs) and all(_message(m) for m in msgs[:20] if isinstance(m, dict))


def _record(o: dict[str, Any]) -> bool:
    return _message(o) or "$set" in o or "$patch" in o or "$rewindTo" in o or "sessionId" in o


def detect(s: Sniff) -> Claim | None:
    """A session JSON (`sessionId` with `projectHash`, messages typed user/gemini without a `role`), or JSONL
    whose header line is a session and whose lines are its records."""
    if s.is_dir or s.is_zip:
        return None
    doc = s.doc
    if s.document is not None and isinstance(doc, dict) and (len(s.objects) <= 1):
        msgs = doc.get("messages")
        typed = isinstance(msgs, list) and all(_message(m) for m in msgs[:20] if isinstance(m, dict))
        return keyed(is_session(doc), {"`sessionId` with `projectHash`": "sessionId" in doc and "projectHash" in doc,
                                       "messages typed user/gemini, no `role`": typed})
    if not s.objects:
        return None
    header = is_session(s.objects[0])
    gemini = any(o.get("type") == "gemini" and _message(o) for o in s.objects)
    return keyed(header or gemini, {"a session header line (sessionId, projectHash) or `gemini` records": True,
                                    "every line a message record or update": all(_record(o) for o in s.objects)})


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the session's messages (the JSONL's last copy of each message id) into drafts."""
    if s.document is not None:
        notes: list[str] = []
        doc = document(path, s, counter, notes)
        msgs = doc.get("messages") if isinstance(doc, dict) else None
        run = _load(msgs if isinstance(msgs, list) else [], counter)
        run.notes[:0] = notes
        return run
    order: dict[Any, dict[str, Any]] = {}
    for lineno, o in iter_jsonl(path, counter):
        if "$rewindTo" in o:
            order = _rewound(order, o["$rewindTo"])
        elif isinstance(o.get("$set"), dict) and isinstance(o["$set"].get("messages"), list):
            # a checkpoint of the whole list (the injected session context, a resumed history)
            order = {}
            for k, m in enumerate(o["$set"]["messages"]):
                if _message(m):
                    order[_key(m, (lineno, k))] = dict(m, _line=lineno)
        elif isinstance(o.get("$patch"), dict):
            _patch(order, o["$patch"])
        elif _message(o):
            # a re-written message (its tool calls finished) replaces its last copy where it stood
            order[_key(o, lineno)] = dict(o, _line=lineno)
    return _load(list(order.values()), counter)


def _key(m: dict[str, Any], default: Any) -> Any:
    """A message's id as its key (`default` when it has none, or one a hostile file made unhashable)."""
    mid = m.get("id")
    return mid if isinstance(mid, str) else default


def _patch(order: dict[Any, dict[str, Any]], p: dict[str, Any]) -> None:
    """Apply a `$patch` record: `{id, content, toolCalls: [{id, result}]}` (or several in `updates`) in place,
    `removeIds` dropped, `orderIds` moved to the end in that order."""
    for one in [p, *(u for u in p.get("updates") or [] if isinstance(u, dict))]:
        m = order.get(one["id"]) if isinstance(one.get("id"), str) else None
        if m is None:
            continue
        if "content" in one:
            m["content"] = one["content"]
        calls = {c["id"]: c for c in m.get("toolCalls") or [] if isinstance(c, dict) and isinstance(c.get("id"), str)}
        for tc in one.get("toolCalls") or []:
            if isinstance(tc, dict) and isinstance(tc.get("id"), str) and tc["id"] in calls and "result" in tc:
                calls[tc["id"]]["result"] = tc["result"]
    for gone in p.get("removeIds") or []:
        if isinstance(gone, str):
            order.pop(gone, None)
    for moved in [k for k in p.get("orderIds") or [] if isinstance(k, str) and k in order]:
        order[moved] = order.pop(moved)


def _rewound(order: dict[Any, dict[str, Any]], target: Any) -> dict[Any, dict[str, Any]]:
    """The messages before `target`: a rewind drops it and everything after (all of them when it is unknown)."""
    keep: dict[Any, dict[str, Any]] = {}
    for k, v in order.items():
        if k == target:
            return keep
        keep[k] = v
    return {}


def _load(msgs: list[Any], counter: LineCounter) -> Run:
    run = Run()
    for i, m in enumerate(msgs, start=1):
        if not isinstance(m, dict):
            counter.skipped += 1
            continue
        run.stamp = iso_time(m.get("timestamp"))
        at = m.get("_line")
        line = at if isinstance(at, int) else i
        try:
            _one(run, m, line)
        except SHAPE_ERRORS:
            counter.skipped += 1
    return run


def _one(run: Run, m: dict[str, Any], line: int) -> None:
    t = m.get("type")
    text = content_text(m.get("content"))
    if t == "user":
        run.new("user", line).add_text(text)
        return
    if t != "gemini":
        run.notice(f"{t}: {text}" if text else str(t), line)  # info/error/warning: Gemini CLI's, not the model's
        return
    dr = run.new("assistant", line)
    dr.add_text(text)
    for th in m.get("thoughts") or []:
        if isinstance(th, dict):
            subject, desc = str(th.get("subject") or ""), str(th.get("description") or "")
            dr.add_reasoning(f"{subject}: {desc}" if subject and desc else subject or desc, present=True)
    tok = m.get("tokens")
    if isinstance(tok, dict):
        def n(key: str) -> int:
            v = tok.get(key)
            return v if type(v) is int and v > 0 else 0
        # Gemini's prompt count includes its cached part; thoughts are counted apart from the output.
        dr.usage = Usage(n("input"), min(n("cached"), n("input")), n("output") + n("thoughts"), n("thoughts"))
    calls = [c for c in m.get("toolCalls") or [] if isinstance(c, dict)]
    for k, c in enumerate(calls):
        cid = c.get("id") if isinstance(c.get("id"), str) else f"{line}-{k}"
        call, edits = interpret_call(str(c.get("name") or "tool"), c.get("args"), cid)
        run.add_call(dr, call, edits)
    for k, c in enumerate(calls):
        cid = c.get("id") if isinstance(c.get("id"), str) else f"{line}-{k}"
        res = run.new("tool", line)
        res.time = iso_time(c.get("timestamp")) or res.time
        out = _output(c)
        res.add_text(out)
        found = run.result(res, cid)
        if c.get("status") in _FAILED:
            res.is_error = True
            run.call_failed(cid)
        code = _EXIT.search(out) if found is not None and found[1].kind == "shell" else None
        if code is not None:
            res.exit_code = int(code.group(1))


def _output(c: dict[str, Any]) -> str:
    """A tool call's result text: its functionResponse output or error, else what the UI showed."""
    parts: list[str] = []
    for r in c.get("result") or []:
        fr = r.get("functionResponse") if isinstance(r, dict) else None
        resp = fr.get("response") if isinstance(fr, dict) else None
        if isinstance(resp, dict):
            v = resp.get("output") if resp.get("output") is not None else resp.get("error")
            if v is not None:
                parts.append(v if isinstance(v, str) else content_text(v))
    if parts:
        return "\n".join(parts)
    shown = c.get("resultDisplay")
    return shown if isinstance(shown, str) else ""


FORMAT = Format(NAME, detect, load, "gemini-cli/ai-sessions_gemini-cli-pomodoro-timer.json", ("gemini", "gemini_cli"))
"""Registered in formats/__init__.py."""
