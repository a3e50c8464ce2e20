"""Cline and Roo Code task histories: `api_conversation_history.json`, and `ui_messages.json` given alone.

The API history is an Anthropic-shaped message list with Cline's own marks:
every message carries `ts` (epoch ms), assistant messages `modelInfo` and
`metrics.tokens` {prompt, completion, cached}. Tool results come back as
user text blocks headed `[tool for 'arg'] Result:` (or as `tool_result`
blocks), followed by Cline's `<environment_details>` and reminders; each
result is its own tool turn, the reminders are not the user's words.
Edits are `write_to_file` {path, content} and `replace_in_file` {path, diff}
whose diff holds SEARCH/REPLACE blocks. Older versions wrote the tool call
as XML in the assistant's text (`<write_to_file><path>…`); that is read too.
The detector keys on a JSON array whose messages have `role` and an integer
`ts`; `ui_messages.json` on an array of `{ts, type: say|ask, say|ask}`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from reviewui.core.transcript.builder import SHAPE_ERRORS, Draft, Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.formats.cline_ui import is_ui_messages, replace_edits
from reviewui.core.transcript.formats.cline_ui import load as load_ui
from reviewui.core.transcript.formats._shape import document
from reviewui.core.transcript.model import FileEdit, ToolCall, Usage
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions, keyed
from reviewui.core.transcript.source import LineCounter
from reviewui.core.transcript.timestamps import iso_time
from reviewui.core.transcript.tools import interpret_call

NAME = "cline"

_RESULT = re.compile(r"^\[([a-z_]+)(?: for '(.*?)')?\] Result:\s*", re.S)
_BOILERPLATE = ("<environment_details>", "# task_progress", "# TODO LIST UPDATE REQUIRED", "\n# task_progress",
                "\n\n\t\t\t\t# TODO LIST")
_FAILED = ("The tool execution failed", "The user denied this operation", "Error writing file", "<error>")
_EXIT = re.compile(r"[Ee]xit code:? (-?\d+)")
_XML_TOOLS = ("write_to_file", "replace_in_file", "execute_command", "read_file", "attempt_completion",
              "list_files", "search_files", "ask_followup_question", "apply_diff", "insert_content")
_XML_CALL = re.compile(r"<(" + "|".join(_XML_TOOLS) + r")>\s*(.*?)\s*</\1>", re.S)
_XML_ARG = re.compile(r"<([a-z_]+)>\n?(.*?)\n?</\1>", re.S)


def detect(s: Sniff) -> Claim | None:
    """A JSON array stamped with integer `ts`: of messages, every one with a `role`; or of UI records, every one
    `{ts, type: say|ask}` with its kind."""
    doc = s.doc
    if s.document is None or s.is_dir or not isinstance(doc, list):
        return None
    items = [x for x in doc[:20] if isinstance(x, dict)]
    if not any(type(x.get("ts")) is int for x in items):
        return None
    if any("role" in x for x in items):
        return keyed(True, {"integer `ts` stamps": True, "`role` on every message": all("role" in x for x in items)})
    return keyed(any(x.get("type") in ("say", "ask") for x in items), {
        "integer `ts` stamps": True, "UI records `{type: say|ask}` with their kind": is_ui_messages(doc)})


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the API history (or, given alone, the UI message log) into drafts."""
    notes: list[str] = []
    doc = document(path, s, counter, notes)
    if is_ui_messages(doc):
        run = load_ui(doc, counter)
    else:
        run = _load_history(doc if isinstance(doc, list) else [], counter)
    run.notes[:0] = notes
    return run


class _State:
    def __init__(self) -> None:
        self.run = Run()
        self.pending: list[ToolCall] = []  # the latest assistant turn's calls, awaiting their results in order


def _load_history(messages: list[Any], counter: LineCounter) -> Run:
    st = _State()
    for i, m in enumerate(messages, start=1):
        if not isinstance(m, dict):
            counter.skipped += 1
            continue
        st.run.stamp = iso_time(m.get("ts"))
        try:
            if m.get("role") == "assistant":
                _assistant(st, m, i)
            else:
                _user(st, m, i)
        except SHAPE_ERRORS:
            counter.skipped += 1
    return st.run


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _assistant(st: _State, m: dict[str, Any], line: int) -> None:
    dr = st.run.new("assistant", line)
    st.pending = []
    for b in _blocks(m.get("content")):
        t = b.get("type")
        if t == "text":
            text = str(b.get("text") or "")
            dr.add_text(text)
            if "</" in text:
                for k, (name, body) in enumerate(_XML_CALL.findall(text)):
                    args = dict(_XML_ARG.findall(body))
                    _call(st, dr, name, args, f"xml-{line}-{k}")  # an id of our own, to link its result
        elif t in ("thinking", "reasoning"):
            dr.add_reasoning(str(b.get("thinking") or b.get("text") or ""))
        elif t == "tool_use":
            cid = b.get("id") if isinstance(b.get("id"), str) else None
            _call(st, dr, str(b.get("name") or "tool"), b.get("input"), cid)
    tokens = m.get("metrics", {}).get("tokens") if isinstance(m.get("metrics"), dict) else None
    if isinstance(tokens, dict):
        dr.usage = _usage(tokens.get("prompt"), tokens.get("cached"), 0, tokens.get("completion"))


def _usage(uncached: Any, read: Any, written: Any, out: Any) -> Usage:
    """Cline's counts: the prompt's uncached part, cache reads and writes apart (as Anthropic reports them)."""
    def n(v: Any) -> int:
        return v if type(v) is int and v > 0 else 0
    return Usage(n(uncached) + n(read) + n(written), n(read), n(out))


def _call(st: _State, dr: Draft, name: str, args: Any, cid: str | None) -> None:
    call, edits = interpret_call(name, args, cid)
    if name in ("replace_in_file", "apply_diff") and isinstance(args, dict):
        path = args.get("path") or args.get("absolutePath")
        if isinstance(path, str) and path:
            edits = replace_edits(path, str(args.get("diff") or ""), cid)
            call = ToolCall(name, args, "edit", (path,), cid)
    elif name == "write_to_file" and isinstance(args, dict) and not call.paths:
        path = args.get("absolutePath")
        if isinstance(path, str) and path:
            edits = [FileEdit(path, "write", None, args.get("content") if isinstance(args.get("content"), str)
                              else None, call_id=cid)]
            call = ToolCall(name, args, "write", (path,), cid)
    st.run.add_call(dr, call, edits)
    st.pending.append(call)


def _user(st: _State, m: dict[str, Any], line: int) -> None:
    said: list[str] = []
    for b in _blocks(m.get("content")):
        t = b.get("type")
        if t == "tool_result":
            _result(st, content_of(b.get("content")), b.get("tool_use_id"), line, bool(b.get("is_error")))
            continue
        if t != "text":
            continue
        text = str(b.get("text") or "")
        hit = _RESULT.match(text)
        if hit is not None:
            _result(st, text[hit.end():], None, line, False, hit.group(1))
        elif not text.lstrip().startswith(_BOILERPLATE) and not text.startswith(_BOILERPLATE):
            said.append(text)
    if said:
        st.run.new("user", line).add_text("\n".join(said))


def content_of(content: Any) -> str:
    """The text of a `tool_result` block's content (a string or a list of text blocks)."""
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text") or "") for b in _blocks(content) if b.get("type") == "text")


def _result(st: _State, text: str, cid: Any, line: int, is_error: bool, name: str | None = None) -> None:
    dr = st.run.new("tool", line)
    dr.add_text(text)
    call: ToolCall | None = None
    if isinstance(cid, str):
        found = st.run.result(dr, cid)
        call = found[1] if found else None
        st.pending = [c for c in st.pending if c is not call]
    elif st.pending:
        # Results come back in call order; a named one takes the first call of that name.
        idx = next((k for k, c in enumerate(st.pending) if name is None or _same_tool(c.name, name)), 0)
        call = st.pending.pop(idx)
        if call.id:
            st.run.result(dr, call.id)
        else:
            dr.result_kind = call.kind
    failed = is_error or text.lstrip().startswith(_FAILED)
    if failed:
        dr.is_error = True
        if call is not None and call.id:
            st.run.call_failed(call.id)
    code = None
    if call is not None and call.kind == "shell":  # "Command executed successfully (exit code 0)", "Exit code: 1"
        code = _EXIT.search(text[:300]) or _EXIT.search(text[-300:])
    if code is not None:
        dr.exit_code = int(code.group(1))


def _same_tool(called: str, reported: str) -> bool:
    # `use_subagents` reports as `[subagents]`; most tools report their own name.
    return called == reported or called.endswith(reported) or reported.endswith(called)


FORMAT = Format(NAME, detect, load, "cline/MRA04242026_api_conversation_history_msgs1-43.json",
                ("roo-code", "roo", "roocode", "cline-ui"))
"""Registered in formats/__init__.py."""

__all__ = ["FORMAT", "content_of", "detect", "load", "replace_edits"]
