"""Cline's (and Roo Code's) `ui_messages.json`, read when it is the only file given.

The UI log is what the chat panel showed: `{ts, type: say|ask, say|ask, text}`
records. `api_req_started` opens a model call (its text is JSON with
`tokensIn`, `tokensOut`, `cacheReads`, `cacheWrites`); the `text`,
`reasoning`, `tool`, `command` and `completion_result` records after it are
that call's reply; `command_output` chunks are the command's result;
`user_feedback` and the first `text` are the user. `tool` records are JSON
(`{tool: readFile|newFileCreated|editedExistingFile|…, path, content|diff}`);
a `use_mcp_server` ask is an MCP call whose `mcp_server_response` is its result.
"""

from __future__ import annotations

import json
import re
from typing import Any, cast

from reviewui.core.transcript.builder import SHAPE_ERRORS, Draft, Run
from reviewui.core.transcript.model import FileEdit, ToolCall, ToolKind, Usage
from reviewui.core.transcript.source import LineCounter
from reviewui.core.transcript.timestamps import iso_time

_SKIP = {"checkpoint_created", "task_progress", "api_req_retried", "deleted_api_reqs", "api_req_finished",
         "resume_task", "resume_completed_task", "shell_integration_warning", "mcp_server_request_started"}
_ERRORS = {"error", "error_retry", "api_req_failed", "diff_error", "mistake_limit_reached"}
_SEARCH = re.compile(r"^(?:-{3,}|<{3,}) ?SEARCH\s*$")
_DIVIDER = re.compile(r"^={3,}\s*$")
_REPLACE = re.compile(r"^(?:\+{3,}|>{3,}) ?REPLACE\s*$")
_TOOL_KINDS: dict[str, str] = {"readFile": "read", "listFilesTopLevel": "read", "listFilesRecursive": "read", "searchFiles": "read",
               "listCodeDefinitionNames": "read", "newFileCreated": "write", "editedExistingFile": "edit",
               "appliedDiff": "edit", "fileDeleted": "edit"}


def is_ui_messages(doc: Any) -> bool:
    """True for a list of UI records: `ts` plus `type` say|ask with its `say`/`ask` kind."""
    if not isinstance(doc, list):
        return False
    items = [x for x in doc[:20] if isinstance(x, dict)]
    return bool(items) and all(
        x.get("type") in ("say", "ask") and "ts" in x and (x.get(str(x.get("type"))) is not None) for x in items
    )


class _State:
    def __init__(self) -> None:
        self.run = Run()
        self.reply: Draft | None = None  # the assistant turn of the current model call
        self.output: Draft | None = None  # the tool turn a command's output chunks go to
        self.usage: Usage | None = None  # the current call's usage, from its api_req_started
        self.reasoning: list[str] = []
        self.n = 0
        self.first = True


def load(doc: list[Any], counter: LineCounter) -> Run:
    """Read the UI records into drafts (records of an unexpected shape counted in `counter`)."""
    st = _State()
    for i, m in enumerate(doc, start=1):
        if not isinstance(m, dict):
            counter.skipped += 1
            continue
        st.run.stamp = iso_time(m.get("ts"))
        try:
            _record(st, m, i)
        except SHAPE_ERRORS:
            counter.skipped += 1
    return st.run


def _reply(st: _State, line: int) -> Draft:
    if st.reply is None:
        st.reply = st.run.new("assistant", line)
        st.reply.usage = st.usage
        st.usage = None
        for r in st.reasoning:
            st.reply.add_reasoning(r)
        st.reasoning = []
    st.output = None
    return st.reply


def _record(st: _State, m: dict[str, Any], line: int) -> None:
    kind = m.get("say") if m.get("type") == "say" else m.get("ask")
    raw = m.get("text")
    text: str = raw if isinstance(raw, str) else ""
    if kind in _SKIP or m.get("partial") is True:
        return
    if kind == "api_req_started":
        st.reply, st.output, st.usage = None, None, _usage(text)
    elif (kind == "text" and st.first) or kind == "user_feedback":
        st.reply = st.output = None
        st.run.new("user", line).add_text(text)
    elif kind == "text" and text:
        _reply(st, line).add_text(text)
    elif kind == "reasoning":
        if st.reply is not None:
            st.reply.add_reasoning(text)
        else:
            st.reasoning.append(text)
    elif kind in ("completion_result", "followup", "plan_mode_respond"):
        if text:
            dr = _reply(st, line)
            dr.add_text(_question(text) if kind != "completion_result" else text)
            dr.final = dr.final or kind == "completion_result"
    elif kind == "command":
        _call(st, line, ToolCall("execute_command", {"command": text}, "shell", (), _id(st)), [])
    elif kind in ("command_output", "mcp_server_response"):
        if st.output is None:
            st.output = st.run.new("tool", line)
            call = st.reply.calls[-1] if st.reply is not None and st.reply.calls else None
            if call is not None and call.id:
                st.run.result(st.output, call.id)
        st.output.add_text(text)
    elif kind == "tool":
        _tool(st, text, line)
    elif kind == "use_mcp_server":
        _mcp(st, text, line)
    elif kind in _ERRORS:
        # Cline's own notices (error_retry's `{"attempt": N, …}`, a failed request): never sent to the model.
        st.run.notice(f"{kind}: {text}".strip(), line)
    st.first = st.first and kind not in ("text", "user_feedback")


def _id(st: _State) -> str:
    st.n += 1
    return f"ui-{st.n}"  # the UI log has no call ids: one of our own, to link the output


def _call(st: _State, line: int, call: ToolCall, edits: list[FileEdit]) -> None:
    dr = _reply(st, line)
    st.run.add_call(dr, call, edits)


def _json_object(text: str) -> dict[str, Any] | None:
    """`text` parsed as a JSON object, else None (a say/ask's `text` is free text as often as JSON)."""
    try:
        t = json.loads(text)
    except ValueError:
        return None
    return t if isinstance(t, dict) else None


def _tool(st: _State, text: str, line: int) -> None:
    t = _json_object(text)
    if t is None:
        return
    name = str(t.get("tool") or "tool")
    path = t.get("path") if isinstance(t.get("path"), str) else None
    kind = cast(ToolKind, _TOOL_KINDS.get(name, "other"))
    cid = _id(st)
    edits: list[FileEdit] = []
    if path and name == "newFileCreated":
        edits = [FileEdit(path, "create", None, str(t.get("content") or ""), None, False, cid)]
    elif path and name in ("editedExistingFile", "appliedDiff"):
        diff = str(t.get("diff") or t.get("content") or "")
        edits = replace_edits(path, diff, cid) or [FileEdit(path, "shell", existed=True, call_id=cid)]
    elif path and name == "fileDeleted":
        edits = [FileEdit(path, "delete", None, None, None, True, cid)]
    _call(st, line, ToolCall(name, t, kind, (path,) if path else (), cid), edits)


def _mcp(st: _State, text: str, line: int) -> None:
    """An MCP tool call (`{type: use_mcp_tool, serverName, toolName, arguments}`): named `server.tool`, so
    the `mcp_server_response` after it is its result, not the result of the call before it."""
    t = _json_object(text)
    if t is None:
        return
    name = ".".join(str(t[k]) for k in ("serverName", "toolName", "uri") if isinstance(t.get(k), str)) or "mcp"
    _call(st, line, ToolCall(name, t, "other", (), _id(st)), [])


def replace_edits(path: str, diff: str, call_id: str | None) -> list[FileEdit]:
    """The replace edits of a SEARCH/REPLACE diff (`------- SEARCH` / `=======` / `+++++++ REPLACE`, or `<<<`/`>>>`)."""
    out: list[FileEdit] = []
    old: list[str] | None = None
    new: list[str] | None = None
    for ln in diff.split("\n"):
        if _SEARCH.match(ln):
            old, new = [], None
        elif old is not None and new is None and _DIVIDER.match(ln):
            new = []
        elif new is not None and _REPLACE.match(ln):
            out.append(FileEdit(path, "replace", "\n".join(old or []), "\n".join(new), None, True, call_id))
            old = new = None
        elif new is not None:
            new.append(ln)
        elif old is not None:
            old.append(ln)
    return out


def _question(text: str) -> str:
    try:
        v = json.loads(text)
    except ValueError:
        return text
    if isinstance(v, dict):
        q = v.get("question") or v.get("response")
        if isinstance(q, str):
            return q
    return text


def _usage(text: str) -> Usage | None:
    try:
        v = json.loads(text)
    except ValueError:
        return None
    if not isinstance(v, dict):
        return None

    def n(key: str) -> int:
        x = v.get(key)
        return x if type(x) is int and x > 0 else 0
    # tokensIn is the uncached part; cache reads and writes are reported beside it.
    return Usage(n("tokensIn") + n("cacheReads") + n("cacheWrites"), n("cacheReads"), n("tokensOut"))
