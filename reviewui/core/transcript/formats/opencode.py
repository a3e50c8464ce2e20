"""OpenCode sessions: the JSON export (`opencode export <session>`) and the Markdown export (the TUI's `/export`).

The JSON is `{info, messages: [{info, parts}]}`. `info` is the session (`id`
`ses_…`, `directory`, `time`); each message's `info` has `role`,
`time.created` (epoch ms), `tokens{input, output, reasoning, cache{read,
write}}`, `finish` and `error`; its `parts` are `text`, `reasoning`, `tool`
(`tool`, `callID`, `state{status, input, output, metadata, error}`),
`patch`, `step-start`/`step-finish` and `file`. A tool part is a call and,
once it has an output or an error, its own tool turn. An export made without
tool input/output still lists the calls (no args, no result). `opencode
export --sanitize` writes `[redacted:<kind>:<part id>]` for every text,
reasoning, tool input and output: those placeholders are read as absent
(the calls, roles, times and tokens stay), each redacted output's turn says
so in its note, and the transcript notes the export. Tool arguments are
camelCase (`filePath`, `oldString`, `newString`) and are mapped onto the
shared tool vocabulary.

The Markdown export (the usual way a session is shared) is `# <title>`,
`**Session ID:** ses_…`, `**Created:**`/`**Updated:**` (in the exporter's
locale), then sections separated by `---`: `## User` (what was typed) and
`## Assistant (<agent> · <model> · <seconds>s)` (or a bare `## Assistant`).
In an assistant section `_Thinking:_` opens reasoning, `**Tool: name**` a
tool call, followed, when the export kept tool input and output, by
`**Input:**` and a ```json block of the call's arguments and `**Output:**`
(or `**Error:**`) and a block of its result; an export made without them
lists the calls by name only (kept as calls of kind `other`: what they
touched is unknown). The export writes no per-message time, so turns have
none, and no boundary between reasoning and reply: after `_Thinking:_` the
first paragraph is read as the reasoning, the rest as the reply.

The detector keys on `messages` whose items hold `info` and a `parts` list
(sure when every one has `info.role`), or on a `**Session ID:** ses_…` line
in text (sure with `## User`/`## Assistant` sections).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from reviewui.core.transcript.builder import SHAPE_ERRORS, Draft, Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.formats._shape import document
from reviewui.core.transcript.model import ToolCall, Usage
from reviewui.core.transcript.normalize import norm_stop
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions, keyed
from reviewui.core.transcript.source import LineCounter, read_text
from reviewui.core.transcript.timestamps import iso_time
from reviewui.core.transcript.tools import interpret_call

NAME = "opencode"
_ARG_NAMES = {"filePath": "file_path", "oldString": "old_string", "newString": "new_string",
              "replaceAll": "replace_all", "patchText": "input"}
_REDACTED = re.compile(r"\[redacted:[a-z-]+:[^\]\s]*\]")
_SANITIZED = "a sanitized export (opencode export --sanitize): text, reasoning, tool input and output are redacted"
_STOPS = {"tool-calls": "tool_use", "stop": "end", "length": "max_tokens", "error": "error", "unknown": "unknown"}


def is_export(doc: Any) -> bool:
    """True for `{messages: [{info: {role}, parts: [...]}]}` (the session `info` beside it optional)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        return False
    items = [m for m in doc["messages"][:20] if isinstance(m, dict)]
    return bool(items) and all(
        isinstance(m.get("info"), dict) and "role" in m["info"] and isinstance(m.get("parts"), list) for m in items
    )


_MD_SESSION = re.compile(r"^\*\*Session ID:\*\* ses_\w+", re.M)
_MD_SECTION = re.compile(r"^## (User|Assistant)\b.*$", re.M)


def _markdown(s: Sniff) -> bool:
    return not s.is_dir and not s.is_zip and s.document is None and not s.objects and (
        _MD_SESSION.search(s.head[:4000]) is not None and _MD_SECTION.search(s.head) is not None)


def detect(s: Sniff) -> Claim | None:
    """A session export: messages of `{info: {role, …}, parts: [...]}`; or its Markdown, a `**Session ID:** ses_…`
    line and `## User`/`## Assistant` sections in text that is not JSON."""
    if s.is_dir or s.is_zip:
        return None
    doc = s.doc
    if s.document is not None:
        msgs = doc.get("messages") if isinstance(doc, dict) else None
        items = [m for m in msgs[:20] if isinstance(m, dict)] if isinstance(msgs, list) else []
        return keyed(any(isinstance(m.get("info"), dict) and isinstance(m.get("parts"), list) for m in items), {
            "messages of `{info, parts}`": True, "`info.role` and a `parts` list on every message": is_export(doc)})
    return keyed(_MD_SESSION.search(s.head[:4000]) is not None, {
        "a `**Session ID:** ses_…` line": True, "Markdown text, not JSON": not s.objects,
        "`## User`/`## Assistant` sections": _MD_SECTION.search(s.head) is not None})


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the export's messages and their parts into drafts (or its Markdown, `load_markdown`)."""
    if _markdown(s):
        return load_markdown(read_text(path))
    notes: list[str] = []
    doc = document(path, s, counter, notes)
    run = Run()
    run.notes[:0] = notes
    info = doc.get("info") if isinstance(doc, dict) else None
    if isinstance(info, dict) and isinstance(info.get("directory"), str):
        run.cwd = info["directory"]
    for i, m in enumerate(doc.get("messages") or [] if isinstance(doc, dict) else [], start=1):
        if not isinstance(m, dict) or not isinstance(m.get("info"), dict):
            counter.skipped += 1
            continue
        try:
            _message(run, m["info"], m.get("parts") or [], i)
        except SHAPE_ERRORS:
            counter.skipped += 1
    return run


def _redacted(v: Any) -> bool:
    """True for a `--sanitize` placeholder (`[redacted:tool-input:prt_…]`): nothing the agent wrote."""
    return isinstance(v, str) and _REDACTED.fullmatch(v) is not None


def _text(run: Run, v: Any) -> str:
    """A part's text, "" for a placeholder (the first one noted on the transcript)."""
    if _redacted(v):
        if _SANITIZED not in run.notes:
            run.notes.append(_SANITIZED)
        return ""
    return str(v or "")


def _args(v: Any) -> Any:
    if _redacted(v):
        return None  # the input was redacted: the call's arguments are unknown
    if not isinstance(v, dict):
        return v
    return {_ARG_NAMES.get(k, k): x for k, x in v.items()}


def _message(run: Run, info: dict[str, Any], parts: list[Any], line: int) -> None:
    t = info.get("time")
    run.stamp = iso_time(t.get("created")) if isinstance(t, dict) else None
    role = info.get("role")
    if role != "assistant":
        dr = run.new("user" if role == "user" else "system", line)
        for p in parts:
            if isinstance(p, dict) and p.get("type") == "text" and not p.get("synthetic"):
                dr.add_text(_text(run, p.get("text")))
        return
    dr = run.new("assistant", line)
    results: list[tuple[str | None, dict[str, Any]]] = []
    for p in parts:
        if not isinstance(p, dict):
            continue
        kind = p.get("type")
        if kind == "text":
            dr.add_text(_text(run, p.get("text")))
        elif kind == "reasoning":
            dr.add_reasoning(_text(run, p.get("text")), present=True)
        elif kind == "tool":
            raw = p.get("state")
            state: dict[str, Any] = raw if isinstance(raw, dict) else {}
            cid = p.get("callID") if isinstance(p.get("callID"), str) else None
            name = str(p.get("tool") or "tool")
            call, edits = interpret_call("apply_patch" if name == "patch" else name, _args(state.get("input")), cid)
            run.add_call(dr, call, edits)
            results.append((cid, state))
    dr.usage = _usage(info.get("tokens"))
    finish = info.get("finish")
    dr.stop = _STOPS.get(finish) if isinstance(finish, str) and finish in _STOPS else norm_stop(finish)
    err = info.get("error")
    if isinstance(err, dict):
        dr.stop = "error"
        data = err.get("data")
        msg = data.get("message") if isinstance(data, dict) else None
        dr.note = f"{err.get('name') or 'error'}: {msg}" if msg else str(err.get("name") or "error")
    for cid, state in results:
        out, error = state.get("output"), state.get("error")
        if out is None and error is None:
            continue  # an export without tool output, or a call still running: no result to show
        res = run.new("tool", line)
        if _redacted(out):
            res.note = "output redacted (a sanitized export)"
        res.add_text(_text(run, out) if isinstance(out, str) else str(error))
        found = run.result(res, cid)
        if state.get("status") == "error" or error is not None:
            res.is_error = True
            run.call_failed(cid)
        meta = state.get("metadata")
        code = meta.get("exit") if isinstance(meta, dict) else None
        if found is not None and found[1].kind == "shell" and type(code) is int:
            res.exit_code = code


def _usage(tok: Any) -> Usage | None:
    if not isinstance(tok, dict):
        return None
    raw = tok.get("cache")
    cache: dict[str, Any] = raw if isinstance(raw, dict) else {}

    def n(v: Any) -> int:
        return v if type(v) is int and v > 0 else 0
    read, write = n(cache.get("read")), n(cache.get("write"))
    # OpenCode's `input` leaves out the cached part; `reasoning` is counted apart from `output`.
    return Usage(n(tok.get("input")) + read + write, read, n(tok.get("output")) + n(tok.get("reasoning")),
                 n(tok.get("reasoning")))


# --- the Markdown export ------------------------------------------------------

_TOOL = re.compile(r"^\*\*Tool: ([^*]+)\*\*\s*$", re.M)
_BLOCK = re.compile(r"^\*\*(Input|Output|Error):\*\*\s*\n```[^\n]*\n(.*?)\n```", re.M | re.S)


def load_markdown(text: str) -> Run:
    """Read an OpenCode Markdown export (the TUI's `/export`) into drafts."""
    run = Run()
    heads = list(_MD_SECTION.finditer(text))
    n = 0
    for k, m in enumerate(heads):
        body = text[m.end():heads[k + 1].start() if k + 1 < len(heads) else len(text)].strip()
        body = body.removesuffix("---").strip()
        line = text.count("\n", 0, m.start()) + 1
        if m.group(1) == "User":
            run.new("user", line).add_text(body)
            continue
        dr = run.new("assistant", line)
        tools = list(_TOOL.finditer(body))
        _prose(dr, body[:tools[0].start()] if tools else body)
        for j, t in enumerate(tools):
            chunk = body[t.end():tools[j + 1].start() if j + 1 < len(tools) else len(body)]
            n += 1
            dr = _md_tool(run, dr, t.group(1).strip(), chunk, f"oc-md-{n}", line)
    return run


def _md_tool(run: Run, dr: Draft, name: str, chunk: str, cid: str, line: int) -> Draft:
    """One `**Tool: name**` of an assistant section: the call, its result, and the prose after it (a new turn)."""
    blocks = dict(_BLOCK.findall(chunk))
    args = _md_args(blocks.get("Input"))
    call, edits = interpret_call("apply_patch" if name == "patch" else name, args, cid)
    if args is None:  # exported without its input: which file or command it touched is unknown
        call = ToolCall(call.name, None, "other", (), cid)
    run.add_call(dr, call, edits)
    if "Output" in blocks or "Error" in blocks:
        res = run.new("tool", line)
        res.add_text(blocks.get("Output", blocks.get("Error", "")))
        run.result(res, cid)
        if "Error" in blocks:
            res.is_error = True
            run.call_failed(cid)
    tail = _BLOCK.sub("", chunk).strip()
    if tail and not tail.startswith("**Tool:"):
        dr = run.new("assistant", line)
        _prose(dr, tail)
    return dr


def _prose(dr: Draft, text: str) -> None:
    text = text.strip()
    if text.startswith("_Thinking:_"):
        # The exporter writes no boundary between reasoning and reply: the first paragraph is the reasoning.
        thought, _, reply = text[len("_Thinking:_"):].strip().partition("\n\n")
        dr.add_reasoning(thought.strip(), present=True)
        dr.add_text(reply.strip())
    else:
        dr.add_text(text)


def _md_args(raw: str | None) -> Any:
    if raw is None:
        return None
    try:
        v = json.loads(raw)
    except ValueError:
        return None
    return {_ARG_NAMES.get(k, k): x for k, x in v.items()} if isinstance(v, dict) else v

FORMAT = Format(NAME, detect, load, "opencode/pfm-categorization_opencode-session.json", ("open-code", "opencode-export"))
"""Registered in formats/__init__.py."""
