"""Loader for SWE-agent `.traj` files.

The `history` list is the conversation the model saw (demonstrations marked
`is_demo` are left out); each item is one turn. Older configs put the action
as text inside the reply (`edit 4:4 … end_of_edit`, `submit`); function-calling
configs add OpenAI-style `tool_calls`. Edits in SWE-agent's own editor apply
to "the open file", which is tracked from `open` actions and the
`(Open file: …)` footer of observations. There is no per-turn usage or stop
reason in this format. Files without a history fall back to `trajectory` steps.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Callable

from reviewui.core.transcript.builder import SHAPE_ERRORS, Draft, Run
from reviewui.core.transcript.model import FileEdit, ToolCall
from reviewui.core.transcript.normalize import content_text, parse_arguments
from reviewui.core.transcript.source import LineCounter
from reviewui.core.transcript.tools import edit_rejected, interpret_call
from reviewui.core.transcript.jsonget import dict_at

_OPEN_FOOTER = re.compile(r"\(Open file: ([^)\n]+)\)")
_FILE_HEADER = re.compile(r"^\[File: (.+?) \(\d+ lines total\)\]")
_CWD_FOOTER = re.compile(r"\(Current directory: ([^)\n]+)\)")
_READ_CMDS = {"open", "goto", "scroll_up", "scroll_down", "find_file", "search_file", "search_dir", "view"}


class _State:
    def __init__(self) -> None:
        self.run = Run()
        self.open_file: str | None = None
        self.seen_assistant = False


def load_document(doc: Any, counter: LineCounter) -> Run:
    """Read a parsed SWE-agent trajectory document into drafts."""
    st = _State()
    if not isinstance(doc, dict):
        return st.run
    history = doc.get("history")
    if isinstance(history, list) and history:
        for i, item in enumerate(history):
            if not isinstance(item, dict):
                counter.skipped += 1
            elif not item.get("is_demo"):
                _guarded(_history_item, st, item, i + 1, counter)
        _final_submit(st, doc.get("trajectory"))
    else:
        steps = doc.get("trajectory")
        for i, step in enumerate(steps if isinstance(steps, list) else []):
            if isinstance(step, dict):
                _guarded(_step, st, step, i + 1, counter)
            else:
                counter.skipped += 1
    return st.run


def _final_submit(st: _State, steps: Any) -> None:
    """A `submit` recorded only as the last trajectory step (the history stops before it) still ends the run."""
    if not isinstance(steps, list) or not steps or not isinstance(steps[-1], dict):
        return
    action = steps[-1].get("action")
    if not isinstance(action, str) or action.strip().split(None, 1)[:1] != ["submit"]:
        return
    if any(c.kind == "finish" for d in st.run.drafts for c in d.calls):
        return
    _step(st, steps[-1], len(steps))


def _guarded(fn: Callable[[_State, dict[str, Any], int], None], st: _State, item: dict[str, Any], pos: int, counter: LineCounter) -> None:
    try:
        fn(st, item, pos)
    except SHAPE_ERRORS:
        counter.skipped += 1


def _history_item(st: _State, item: dict[str, Any], pos: int) -> None:
    role = item.get("role")
    text = content_text(item.get("content"))
    run = st.run
    if role == "system":
        run.new("system", pos).add_text(text)
    elif role == "assistant":
        st.seen_assistant = True
        dr = run.new("assistant", pos)
        dr.add_text(text)
        _reasoning(dr, item)
        _actions(st, dr, item.get("action"), item.get("tool_calls"))
    elif role == "tool" or (role == "user" and st.seen_assistant):
        _observation(st, text, pos, item.get("tool_call_ids"))
    else:
        run.new("user", pos).add_text(text)


def _step(st: _State, step: dict[str, Any], pos: int) -> None:
    dr = st.run.new("assistant", pos)
    dr.add_text(content_text(step.get("response")) or content_text(step.get("thought")))
    state = step.get("state")
    if isinstance(state, dict) and isinstance(state.get("working_dir"), str):
        st.run.cwd = state["working_dir"]
    _actions(st, dr, step.get("action"), None)
    _observation(st, content_text(step.get("observation")), pos, None)


def _reasoning(dr: Draft, item: dict[str, Any]) -> None:
    blocks = item.get("thinking_blocks")
    if isinstance(blocks, list):
        for b in blocks:
            if isinstance(b, dict):
                t = b.get("thinking")
                dr.add_reasoning(t if isinstance(t, str) else None, present=True)


def _observation(st: _State, text: str, pos: int, call_ids: Any) -> None:
    prev = st.run.last
    dr = st.run.new("tool", pos)
    dr.add_text(text)
    if isinstance(call_ids, list):
        for cid in call_ids:
            st.run.result(dr, cid)
    if prev is not None and prev.role == "assistant" and edit_rejected(text):
        # The linter gate threw the edit away: a failed call, not a write.
        dr.is_error = True
        for c in prev.calls:
            if c.kind in ("edit", "write"):
                st.run.call_failed(c.id)
    head = _FILE_HEADER.match(text[:500])
    tail = _OPEN_FOOTER.search(text[-500:])
    if tail and tail.group(1).strip() != "n/a":
        st.open_file = tail.group(1).strip()
    elif head:
        st.open_file = head.group(1).strip()
    cwd = _CWD_FOOTER.search(text[-300:])
    if cwd and st.run.cwd is None:
        st.run.cwd = cwd.group(1).strip()


def _actions(st: _State, dr: Draft, action: Any, tool_calls: Any) -> None:
    if isinstance(tool_calls, list) and tool_calls:
        for c in tool_calls:
            if not isinstance(c, dict):
                continue
            fn = dict_at(c, "function")
            name = str(fn.get("name") or "tool")
            call, edits = _function_call(st, name, parse_arguments(fn.get("arguments")), c.get("id"))
            st.run.add_call(dr, call, edits)
        return
    if isinstance(action, str) and action.strip():
        call, edits = _text_action(st, action.strip())
        if call.id is None:  # text actions have no id; one is needed to drop a rejected edit
            cid = f"swe-{len(st.run.drafts)}"
            call = ToolCall(call.name, call.arguments, call.kind, call.paths, cid)
            edits = [FileEdit(e.path, e.operation, e.old, e.new, e.patch, e.existed, cid) for e in edits]
        st.run.add_call(dr, call, edits)


def _function_call(st: _State, name: str, args: Any, call_id: Any) -> tuple[ToolCall, list[FileEdit]]:
    cid = call_id if isinstance(call_id, str) else None
    a = args if isinstance(args, dict) else {}
    target = st.open_file
    if name == "edit" and ("search" in a or "replace" in a) and target:
        edit = FileEdit(target, "replace", _s(a.get("search")), _s(a.get("replace")), None, True, cid)
        return ToolCall(name, args, "edit", (target,), cid), [edit]
    if name in ("insert", "append") and target and "path" not in a:
        # SWE-agent's insert/append act on the open file; the call names no path of its own.
        text = _s(a.get("text")) or _s(a.get("content")) or _s(a.get("new_str"))
        return ToolCall(name, args, "edit", (target,), cid), [FileEdit(target, "insert", None, text, None, True, cid)]
    if name == "open" and isinstance(a.get("path"), str):
        st.open_file = a["path"]
        return ToolCall(name, args, "read", (a["path"],), cid), []
    if name == "create" and isinstance(a.get("filename"), str):
        st.open_file = a["filename"]
        return ToolCall(name, args, "write", (a["filename"],), cid), [FileEdit(a["filename"], "create", call_id=cid)]
    return interpret_call(name, args, cid)


def _s(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _body(lines: list[str], end: str) -> str:
    out: list[str] = []
    for ln in lines[1:]:
        if ln.strip() == end:
            break
        out.append(ln)
    return "\n".join(out)


def _text_action(st: _State, action: str) -> tuple[ToolCall, list[FileEdit]]:
    lines = action.split("\n")
    first = lines[0].strip()
    word = first.split(None, 1)[0] if first else ""
    rest = first[len(word) :].strip()
    target = st.open_file
    if word == "edit" and target:
        if re.match(r"^\d+:\d+$", rest):
            edit = FileEdit(target, "replace", None, _body(lines, "end_of_edit"), None, True)
            return ToolCall("edit", action, "edit", (target,)), [edit]
        parts = _split(rest)
        if len(parts) == 2:
            return ToolCall("edit", action, "edit", (target,)), [FileEdit(target, "replace", parts[0], parts[1], None, True)]
    if word in ("insert", "append") and target:
        edit = FileEdit(target, "insert", None, _body(lines, f"end_of_{word}"), None, True)
        return ToolCall(word, action, "edit", (target,)), [edit]
    if word == "create" and rest:
        path = _split(rest)[0] if _split(rest) else rest
        st.open_file = path
        return ToolCall("create", action, "write", (path,)), [FileEdit(path, "create", None, "")]
    if word == "submit":
        return ToolCall("submit", action, "finish"), []
    if word == "str_replace_editor":
        return interpret_call("str_replace_editor", _editor_args(action))
    if word in _READ_CMDS:
        parts = _split(rest)
        if word == "open" and parts:
            st.open_file = parts[0]
        return ToolCall(word, action, "read", (parts[0],) if parts and word == "open" else ()), []
    return interpret_call("bash", {"command": action})


def _split(s: str) -> list[str]:
    try:
        return shlex.split(s)
    except ValueError:
        return s.split()


def _editor_args(action: str) -> dict[str, Any]:
    """Parse `str_replace_editor <command> <path> --old_str … --new_str …` into arguments."""
    argv = _split(action)
    args: dict[str, Any] = {}
    if len(argv) >= 3:
        args["command"], args["path"] = argv[1], argv[2]
    i = 3
    while i < len(argv):
        tok = argv[i]
        if tok.startswith("--") and i + 1 < len(argv):
            args[tok[2:]] = argv[i + 1]
            i += 2
        else:
            i += 1
    return args
