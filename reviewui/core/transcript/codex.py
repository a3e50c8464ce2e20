"""Loader for OpenAI Codex CLI rollout JSONL (`~/.codex/sessions/…/rollout-*.jsonl`).

A line is `{timestamp, type, payload}`. `response_item`s are the conversation
(messages, reasoning, function/custom tool calls and their outputs);
`event_msg`s repeat some of it for the UI and add what is not in the model's
history: `token_count` after each model call, `task_complete`, compaction and
patch results. The items of one model call run until its `token_count`, so
that event closes an assistant turn and gives its usage (it is written twice;
the repeat is ignored). `turn_context` says what each call was configured
with, which is how a changed prompt prefix is seen.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from reviewui.core.transcript.builder import SHAPE_ERRORS, Draft, Run
from reviewui.core.transcript.model import COMPACTION, FileEdit
from reviewui.core.transcript.normalize import content_text, parse_arguments, prompt_key, usage_from
from reviewui.core.transcript.patches import parse_unified_diff
from reviewui.core.transcript.source import LineCounter, iter_jsonl
from reviewui.core.transcript.timestamps import iso_time
from reviewui.core.transcript.tools import interpret_call
from reviewui.core.transcript.jsonget import dict_at

_ASSISTANT_ITEMS = {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
_OUTPUT_ITEMS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
_CONTEXT_PREFIXES = (
    "<environment_context>", "<user_instructions>", "<INSTRUCTIONS>", "# AGENTS.md", "<permissions",
    "<collaboration_mode>", "<developer_instructions>", "<skills", "<user_shell_command>",
)
_EXIT = re.compile(r"(?:Process exited with code|Exit code:)\s*(-?\d+)")
_REDACTED_SHA = re.compile(r"^\[REDACTED_[A-Z_]+ len=\d+ sha=([0-9a-f]+)\]$")


class _State:
    def __init__(self) -> None:
        self.run = Run()
        self.cur: Draft | None = None  # the assistant turn of the model call in progress
        self.closed = True  # a token_count has ended `cur`'s model call
        self.key: str | None = None
        self.base: Any = None
        self.user_msgs: set[str] = set()
        self.user_drafts: list[Draft] = []


def load(path: Path, counter: LineCounter) -> Run:
    """Read a Codex rollout file into drafts (malformed lines counted in `counter`)."""
    st = _State()
    for lineno, d in iter_jsonl(path, counter):
        t = d.get("type")
        p = d.get("payload")
        ts = d.get("timestamp")  # Codex writes ISO 8601 strings: taken as they are
        st.run.stamp = ts if type(ts) is str else iso_time(ts)
        if not isinstance(p, dict):
            if t in _ASSISTANT_ITEMS or t in _OUTPUT_ITEMS or t == "message":
                t, p = "response_item", d  # the oldest rollouts wrote items flat
            else:
                continue
        try:
            _line(st, t, p, lineno)
        except SHAPE_ERRORS:
            counter.skipped += 1
    _classify_user_messages(st)
    return st.run


def _line(st: _State, t: Any, p: dict[str, Any], lineno: int) -> None:
    if t == "response_item":
        _item(st, p, lineno)
    elif t == "event_msg":
        _event(st, p, lineno)
    elif t == "turn_context":
        ctx = {k: v for k, v in p.items() if k not in ("turn_id", "trace_id")}
        st.key = prompt_key(st.base, ctx)
        if isinstance(p.get("cwd"), str):
            st.run.cwd = p["cwd"]
    elif t == "session_meta":
        st.base = p.get("base_instructions") or p.get("instructions")
        if isinstance(p.get("cwd"), str) and st.run.cwd is None:
            st.run.cwd = p["cwd"]
    elif t == "compacted":
        _compaction(st, lineno, content_text(p.get("message")))


def _assistant(st: _State, lineno: int) -> Draft:
    if st.cur is None or st.closed or st.run.last is not st.cur:
        st.cur = st.run.new("assistant", lineno)
        st.cur.prompt_key = st.key
        st.closed = False
    return st.cur


def _item(st: _State, p: dict[str, Any], lineno: int) -> None:
    it = p.get("type")
    run = st.run
    if it == "message":
        role = p.get("role")
        text = content_text(p.get("content"))
        if role == "assistant":
            dr = _assistant(st, lineno)
            dr.add_text(text)
            if p.get("phase") == "final_answer":
                dr.final = True
        else:
            dr = run.new("user" if role == "user" else "system", lineno)
            dr.add_text(text)
            if role == "user":
                st.user_drafts.append(dr)
        return
    if it == "reasoning":
        dr = _assistant(st, lineno)
        parts = content_text(p.get("summary")), content_text(p.get("content"))
        text = "\n".join(x for x in parts if x)
        dr.add_reasoning(text or None, present=bool(text or p.get("encrypted_content")))
        return
    if it in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
        dr = _assistant(st, lineno)
        if it == "function_call":
            name, args = str(p.get("name") or "function"), parse_arguments(p.get("arguments"))
        elif it == "custom_tool_call":
            name, args = str(p.get("name") or "tool"), {"input": p.get("input")}
        elif it == "local_shell_call":
            action = dict_at(p, "action")
            name, args = "local_shell", {"command": action.get("command")}
        else:
            name, args = "web_search", p.get("action")
        call, edits = interpret_call(name, args, p.get("call_id") or p.get("id"))
        run.add_call(dr, call, edits)
        return
    if it in _OUTPUT_ITEMS:
        dr = run.new("tool", lineno)
        call_id = p.get("call_id")
        found = run.result(dr, call_id)
        text, code = _output(p.get("output"))
        dr.add_text(text)
        dr.exit_code = code
        if code not in (None, 0) or (found is not None and found[1].kind == "edit" and _patch_failed(text)):
            dr.is_error = True
            if found is not None and found[1].kind == "edit":
                run.call_failed(call_id)
        return
    if it == "compaction":
        _compaction(st, lineno, "compacted")


def _output(raw: Any) -> tuple[str, int | None]:
    """Return the text of a tool output and the exit code it reports."""
    code: int | None = None
    if isinstance(raw, str) and raw.startswith("{") and '"output"' in raw[:200]:
        try:
            obj = json.loads(raw)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            meta = obj.get("metadata")
            if isinstance(meta, dict) and isinstance(meta.get("exit_code"), int):
                code = meta["exit_code"]
            raw = obj.get("output", raw)
    text = content_text(raw)
    if code is None:
        m = _EXIT.search(text[:400])
        if m:
            code = int(m.group(1))
    return text, code


def _patch_failed(text: str) -> bool:
    head = text[:200].lower()
    return "verification failed" in head or head.startswith(("error", "failed", "invalid patch"))


def _event(st: _State, p: dict[str, Any], lineno: int) -> None:
    et = p.get("type")
    if et == "token_count":
        info = p.get("info")
        if isinstance(info, dict) and st.cur is not None and not st.closed:
            usage = usage_from(info.get("last_token_usage"))
            if usage is not None and st.cur.usage is None:
                st.cur.usage = usage
            st.closed = True
    elif et == "task_complete":
        last = _last_assistant(st.run)
        if last is not None and p.get("last_agent_message") is not None:
            last.final = True
        st.closed = True
    elif et == "user_message":
        msg = p.get("message")
        if isinstance(msg, str):
            st.user_msgs.add(_match_key(msg))
    elif et == "context_compacted":
        last = st.run.last
        if last is None or COMPACTION not in last.flags:
            _compaction(st, lineno, "context compacted")
    elif et == "patch_apply_end":
        _patch_result(st, p)
    elif et in ("turn_aborted", "error") and st.cur is not None:
        if not st.closed and st.cur.stop is None and not st.cur.calls:
            st.cur.stop = "error"
        st.closed = True


def _patch_result(st: _State, p: dict[str, Any]) -> None:
    call_id = p.get("call_id")
    if p.get("success") is False:
        st.run.call_failed(call_id)
        return
    if st.run.edits_of(call_id):
        return  # the apply_patch input already said what changed
    changes = p.get("changes")
    if not isinstance(changes, dict):
        return
    edits: list[FileEdit] = []
    for path, ch in changes.items():
        if not isinstance(ch, dict):
            continue
        diff = ch.get("unified_diff") if isinstance(ch.get("unified_diff"), str) else ""
        kind = ch.get("type")
        target = ch.get("move_path") or path
        parsed = parse_unified_diff(f"--- a/{path}\n+++ b/{target}\n{diff}", call_id) if diff else []
        if kind == "delete":
            edits.append(FileEdit(path, "delete", None, None, None, True, call_id))
        elif kind == "add":
            content = ch.get("content") if isinstance(ch.get("content"), str) else None
            new = content if content is not None else (parsed[0].new if parsed else None)
            edits.append(FileEdit(target, "create", None, new, None, False, call_id))
        elif parsed:
            e = parsed[0]
            edits.append(FileEdit(target, "patch", e.old, e.new, e.patch, True, call_id))
        else:
            edits.append(FileEdit(target, "shell", None, None, None, True, call_id))
    found = st.run.call(call_id)
    if found is not None and edits:
        found[0].edits.extend(edits)


def _last_assistant(run: Run) -> Draft | None:
    for d in reversed(run.drafts):
        if d.role == "assistant":
            return d
    return None


def _compaction(st: _State, lineno: int, text: str) -> None:
    dr = st.run.new("system", lineno)
    dr.add_text(text)
    dr.add_flag(COMPACTION)
    st.closed = True


def _match_key(text: str) -> str:
    m = _REDACTED_SHA.match(text)
    return "sha:" + m.group(1) if m else text.strip()


def _classify_user_messages(st: _State) -> None:
    """Codex sends instructions and environment context as `user` messages: make those `system`.

    Known context wrappers are recognised by their first characters. Beyond
    that, when the rollout also logged what the person typed (`user_message`
    events), a user message matching none of those is context too; unless
    nothing matches at all, which means the two disagree in form and the
    test proves nothing.
    """
    keys = {id(dr): _match_key("\n".join(dr.texts)) for dr in st.user_drafts}
    by_event = bool(st.user_msgs) and any(k in st.user_msgs for k in keys.values())
    for dr in st.user_drafts:
        text = "\n".join(dr.texts).lstrip()
        if text.startswith(_CONTEXT_PREFIXES):
            dr.role = "system"
        elif by_event and keys[id(dr)] not in st.user_msgs:
            dr.role = "system"
