"""Loader for `codex exec --json` event streams (JSONL), which differ from Codex rollouts.

A line is a thread event: `thread.started`, `turn.started`, `item.started` /
`item.updated` / `item.completed` with a flat `item` (`reasoning`,
`command_execution` with its `aggregated_output` and `exit_code`,
`file_change` with the paths it added, updated or deleted, `mcp_tool_call`,
`web_search`, `agent_message`, `error`, `todo_list`), and `turn.completed`
with the turn's token usage (or `turn.failed`). Only completed items are
turns; the prompt itself is not in the stream. The agent message that ends a
turn is its final answer.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from reviewui.core.transcript.builder import SHAPE_ERRORS, Draft, Run
from reviewui.core.transcript.detect import CODEX_EXEC_EVENTS
from reviewui.core.transcript.model import EditOp, FileEdit, ToolCall
from reviewui.core.transcript.normalize import usage_from
from reviewui.core.transcript.source import LineCounter, iter_jsonl
from reviewui.core.transcript.tools import interpret_call
from reviewui.core.transcript.jsonget import dict_at, str_at

EVENT_TYPES = CODEX_EXEC_EVENTS
"""The `type`s of `codex exec --json` lines."""

_WRAPPED = re.compile(r"^(?:\S*/)?(?:bash|sh|zsh)\s+-l?c\s+(.+)$", re.DOTALL)
_FILE_OPS: dict[str, EditOp] = {"add": "create", "delete": "delete"}


class _State:
    def __init__(self) -> None:
        self.run = Run()
        self.cur: Draft | None = None  # the assistant turn collecting this model step


def load(path: Path, counter: LineCounter) -> Run:
    """Read a `codex exec --json` stream into drafts (malformed lines counted in `counter`)."""
    st = _State()
    for lineno, d in iter_jsonl(path, counter):
        try:
            _event(st, d, lineno)
        except SHAPE_ERRORS:
            counter.skipped += 1
    return st.run


def _assistant(st: _State, lineno: int, fresh: bool = False) -> Draft:
    cur = st.cur
    if cur is None or fresh or st.run.last is not cur:
        cur = st.cur = st.run.new("assistant", lineno)
    return cur


def _event(st: _State, d: dict[str, Any], lineno: int) -> None:
    t = d.get("type")
    run = st.run
    if t == "item.completed":
        item = d.get("item")
        if isinstance(item, dict):
            _item(st, item, lineno)
    elif t == "turn.completed":
        last = next((x for x in reversed(run.drafts) if x.role == "assistant"), None)
        if last is not None:
            last.usage = usage_from(d.get("usage"))  # the whole turn's usage: the only figure the stream has
            if last.texts and not last.calls:
                last.final = True  # the message that ends the turn is the answer
        st.cur = None
    elif t in ("turn.failed", "error"):
        err = dict_at(d, "error")
        # `Reconnecting... 2/5 (…)` retries and failures: Codex's notices, never sent to the model.
        run.notice(str(err.get("message") or d.get("message") or "turn failed"), lineno)
        st.cur = None


def _item(st: _State, item: dict[str, Any], lineno: int) -> None:
    kind = item.get("type")
    run = st.run
    iid = item.get("id") if isinstance(item.get("id"), str) else None
    if kind == "reasoning":
        cur = _assistant(st, lineno, fresh=bool(st.cur and (st.cur.calls or st.cur.texts)))
        text = item.get("text")
        cur.add_reasoning(text if isinstance(text, str) else None)
    elif kind == "agent_message":
        cur = _assistant(st, lineno, fresh=bool(st.cur and st.cur.calls))
        cur.add_text(item.get("text") if isinstance(item.get("text"), str) else "")
    elif kind == "command_execution":
        cmd = str_at(item, "command", "")
        call, edits = interpret_call("exec_command", {"command": _unwrap(cmd)}, iid)
        run.add_call(_assistant(st, lineno), call, edits)
        res = run.new("tool", lineno)
        out = item.get("aggregated_output")
        res.add_text(out if isinstance(out, str) else "")
        run.result(res, iid)
        code = item.get("exit_code")
        res.exit_code = code if isinstance(code, int) else None
        if item.get("status") == "failed" and res.exit_code is None:
            res.is_error = True
        st.cur = None
    elif kind == "file_change":
        changes = [c for c in item.get("changes") or [] if isinstance(c, dict) and isinstance(c.get("path"), str)]
        edits = [
            FileEdit(c["path"], _FILE_OPS.get(str(c.get("kind")), "shell"), None, None, None,
                     c.get("kind") != "add", iid)
            for c in changes
        ]
        paths = tuple(dict.fromkeys(e.path for e in edits))
        run.add_call(_assistant(st, lineno), ToolCall("apply_patch", {"changes": changes}, "edit", paths, iid), edits)
        res = run.new("tool", lineno)
        res.add_text(f"{item.get('status', '')}: " + ", ".join(f"{c.get('kind')} {c['path']}" for c in changes))
        run.result(res, iid)
        if item.get("status") == "failed":
            res.is_error = True
            run.call_failed(iid)
        st.cur = None
    elif kind == "mcp_tool_call" or kind == "web_search":
        name = f"{item.get('server')}.{item.get('tool')}" if kind == "mcp_tool_call" else "web_search"
        call, edits = interpret_call(name, item.get("arguments") or {"query": item.get("query")}, iid)
        run.add_call(_assistant(st, lineno), call, edits)
        res = run.new("tool", lineno)
        res.add_text(str(item.get("result") or item.get("error") or ""))
        run.result(res, iid)
        res.is_error = bool(item.get("error")) or item.get("status") == "failed"
        st.cur = None
    elif kind == "error":
        run.notice(str(item.get("message") or "error"), lineno)
        st.cur = None


def _unwrap(cmd: str) -> str:
    """`bash -lc 'cat a > b'` → `cat a > b`: the command the shell ran, so its writes are seen."""
    m = _WRAPPED.match(cmd.strip())
    if m is None:
        return cmd
    try:
        parts = shlex.split(m.group(1))
    except ValueError:
        return cmd
    return parts[0] if len(parts) == 1 else cmd
