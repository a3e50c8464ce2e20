"""Loader for OpenHands trajectories: V0 event lists and V1 conversation folders.

V0 (a saved trajectory, or a session's `events/<n>.json` files) is a list of
events, each an `action` or an `observation`; an agent action carries
`tool_call_metadata` with the full model response (usage, finish reason, the
tool call's real arguments). V1 (`<conversation>/base_state.json` +
`events/event-*.json`) has typed events (`ActionEvent`, `ObservationEvent`,
`MessageEvent` …) and keeps per-call usage in `base_state.json`, joined on
`llm_response_id`. Actions from one model response form one turn; state
changes and other bookkeeping events are not turns.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from reviewui.core.bounded import open_regular
from reviewui.core.errors import ReviewError
from reviewui.core.transcript.builder import SHAPE_ERRORS, Draft, Run
from reviewui.core.transcript.model import COMPACTION, EditOp, FileEdit, ToolCall, Usage
from reviewui.core.transcript.normalize import content_text, norm_stop, parse_arguments, prompt_key, usage_from
from reviewui.core.transcript.source import LineCounter, load_document
from reviewui.core.transcript.tools import edit_rejected, interpret_call
from reviewui.core.transcript.jsonget import dict_at
from reviewui.core.transcript.timestamps import iso_time

_SKIP_ACTIONS = {"change_agent_state", "recall", "null"}
_SKIP_OBSERVATIONS = {"agent_state_changed", "null", "recall", "user_rejected"}
_COMPACT = {"condensation", "agent_condensation", "condense", "condensation_request"}
_V0_TOOL = {"run": "execute_bash", "run_ipython": "execute_ipython_cell", "read": "read", "write": "write",
            "finish": "finish", "think": "think", "browse": "browser", "browse_interactive": "browser"}
_V1_SKIP = {"ConversationStateUpdateEvent", "PauseEvent", "ConversationErrorEvent"}
_EVENT_NO = re.compile(r"(\d+)")
_HANDED_BACK = {"awaiting_user_input", "finished"}


def _final_message(run: Run) -> None:
    """The agent's last message before it hands control back is its final answer: a done claim."""
    for d in reversed(run.drafts):
        if d.role == "assistant":
            if not d.calls and d.texts:
                d.final = True
            return
        if d.role != "tool" or d.texts:
            return  # a user turn or a real result came after it


def load_events(events: list[Any], counter: LineCounter) -> Run:
    """Read a V0 event list into drafts (events of an unexpected shape counted in `counter`)."""
    run = Run()
    actions: dict[Any, ToolCall] = {}
    cur: Draft | None = None
    for pos, e in enumerate(events, start=1):
        if not isinstance(e, dict):
            counter.skipped += 1
            continue
        run.stamp = iso_time(e.get("timestamp"))
        try:
            if "action" in e:
                cur = _v0_action(run, e, pos, cur, actions)
            elif "observation" in e:
                _v0_observation(run, e, pos, actions)
                cur = None
        except SHAPE_ERRORS:
            counter.skipped += 1
    return run


def _v0_action(run: Run, e: dict[str, Any], pos: int, cur: Draft | None, actions: dict[Any, ToolCall]) -> Draft | None:
    action = e.get("action")
    args = dict_at(e, "args")
    if action in _SKIP_ACTIONS:
        return cur
    if action in _COMPACT:
        dr = run.new("system", pos)
        dr.add_text(content_text(args.get("summary")) or "condensed")
        dr.add_flag(COMPACTION)
        return None
    source = e.get("source")
    if action == "system":
        dr = run.new("system", pos)
        dr.add_text(content_text(args.get("content")))
        # The tool set is part of the prompt (and of the provider's cache key): a change of tools alone counts.
        dr.prompt_key = run.prompt_key = prompt_key(args.get("content"), args.get("tools"))
        return None
    if action == "message" and source != "agent":
        run.new("user", pos).add_text(content_text(args.get("content")) or content_text(e.get("message")))
        return None
    meta = dict_at(e, "tool_call_metadata")
    resp = dict_at(meta, "model_response")
    rid = resp.get("id")
    if cur is None or rid is None or cur.key != rid or run.last is not cur:
        cur = run.new("assistant", pos, key=rid)
        cur.prompt_key = run.prompt_key
        _v0_response(cur, resp, args)
    if action == "message":
        cur.add_text(content_text(args.get("content")))
        return cur
    call = _v0_call(run, cur, e, action, args, meta, resp)
    if call is not None:
        actions[e.get("id")] = call
    return cur


def _v0_response(dr: Draft, resp: dict[str, Any], args: dict[str, Any]) -> None:
    choices = resp.get("choices")
    msg: dict[str, Any] = {}
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        dr.stop = norm_stop(choices[0].get("finish_reason"))
        if isinstance(choices[0].get("message"), dict):
            msg = choices[0]["message"]
    text = content_text(msg.get("content")) or content_text(args.get("thought"))
    dr.add_text(text)
    rc = msg.get("reasoning_content")
    if isinstance(rc, str) and rc:
        dr.add_reasoning(rc)
    dr.usage = usage_from(resp.get("usage"))


def _v0_call(
    run: Run, dr: Draft, e: dict[str, Any], action: Any, args: dict[str, Any],
    meta: dict[str, Any], resp: dict[str, Any],
) -> ToolCall | None:
    call_id = meta.get("tool_call_id") if isinstance(meta.get("tool_call_id"), str) else None
    name = meta.get("function_name") if isinstance(meta.get("function_name"), str) else None
    real_args: Any = None
    if call_id:
        for c in _response_calls(resp):
            if c.get("id") == call_id and isinstance(c.get("function"), dict):
                real_args = parse_arguments(c["function"].get("arguments"))
    if name is None or real_args is None:
        name, real_args = _v0_args(action, args)
    call, edits = interpret_call(name, real_args, call_id or f"oh-{e.get('id')}")
    if action == "finish" and call.kind != "finish":
        call = ToolCall(call.name, call.arguments, "finish", call.paths, call.id)
    run.add_call(dr, call, edits)
    return call


def _response_calls(resp: dict[str, Any]) -> list[dict[str, Any]]:
    choices = resp.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        msg = choices[0].get("message")
        if isinstance(msg, dict) and isinstance(msg.get("tool_calls"), list):
            return [c for c in msg["tool_calls"] if isinstance(c, dict)]
    return []


def _v0_args(action: Any, args: dict[str, Any]) -> tuple[str, Any]:
    """Arguments rebuilt from the action's own args when the model response is not stored."""
    if action == "edit":
        if args.get("command"):
            return "str_replace_editor", args
        return "write", {"path": args.get("path"), "content": args.get("content")}
    if action == "run":
        return "execute_bash", {"command": args.get("command")}
    return _V0_TOOL.get(str(action), str(action)), args


def _v0_observation(run: Run, e: dict[str, Any], pos: int, actions: dict[Any, ToolCall]) -> None:
    obs = e.get("observation")
    if obs == "agent_state_changed":
        extras = dict_at(e, "extras")
        if extras.get("agent_state") in _HANDED_BACK:
            _final_message(run)
        return
    if obs in _SKIP_OBSERVATIONS:
        return
    if obs in _COMPACT:
        dr = run.new("system", pos)
        dr.add_text(content_text(e.get("content")) or "condensed")
        dr.add_flag(COMPACTION)
        return
    dr = run.new("tool", pos)
    dr.add_text(content_text(e.get("content")))
    extras = dict_at(e, "extras")
    call = actions.get(e.get("cause"))
    if call is not None:
        run.result(dr, call.id)
    meta = extras.get("metadata")
    code = meta.get("exit_code") if isinstance(meta, dict) else None
    dr.exit_code = code if isinstance(code, int) and code >= 0 else None
    if obs == "error" or (call is not None and call.kind in ("edit", "write") and edit_rejected(dr.texts[0] if dr.texts else "")):
        dr.is_error = True
        if call is not None:
            run.call_failed(call.id)
    elif obs == "edit" and call is not None:
        _v0_edit_result(run, call, extras)


def _v0_edit_result(run: Run, call: ToolCall, extras: dict[str, Any]) -> None:
    """The edit observation says whether the file existed and what it held."""
    prev = extras.get("prev_exist")
    old = extras.get("old_content")
    out: list[FileEdit] = []
    for ed in run.edits_of(call.id):
        if ed.operation in ("create", "write"):
            op: EditOp = "write" if prev else "create"
            old_text = old if isinstance(old, str) and prev else None
            out.append(FileEdit(ed.path, op, old_text, ed.new, ed.patch, bool(prev), ed.call_id))
        else:
            out.append(ed)
    if out:
        run.replace_edits(call.id, out)


# --- V1 ---------------------------------------------------------------------


def event_files(folder: Path) -> list[Path]:
    """The event files of a conversation folder (or of an `events` folder), in event order."""
    events_dir = folder / "events" if (folder / "events").is_dir() else folder
    return sorted((p for p in events_dir.glob("*.json") if p.name != "base_state.json"), key=_event_order)


def load_folder(folder: Path, counter: LineCounter) -> Run:
    """Read a conversation folder of event files (V1, or a V0 session's events/) into drafts.

    Event files that cannot be read or parsed are counted in `counter`.
    """
    events: list[dict[str, Any]] = []
    for f in event_files(folder):
        try:
            with open_regular(f, "transcript event") as fh:  # a FIFO or device is skipped, not waited on
                e = json.loads(fh.read())
        except (OSError, ValueError, ReviewError):
            counter.skipped += 1
            continue
        if isinstance(e, dict):
            events.append(e)
        else:
            counter.skipped += 1
    if events and "kind" not in events[0] and ("action" in events[0] or "observation" in events[0]):
        return load_events(events, counter)
    conv = folder if (folder / "events").is_dir() else folder.parent
    run = _load_v1(events, _v1_usages(conv), counter)
    run.cwd = v1_cwd(conv)
    return run


def _load_v1(events: list[dict[str, Any]], usages: dict[Any, Usage], counter: LineCounter) -> Run:
    st = _V1(usages)
    for pos, e in enumerate(events, start=1):
        try:
            _v1_event(st, e, pos)
        except SHAPE_ERRORS:
            counter.skipped += 1
    return st.run


class _V1:
    def __init__(self, usages: dict[Any, Usage]) -> None:
        self.run = Run()
        self.usages = usages
        self.cur: Draft | None = None
        self.key: str | None = None


def _v1_event(st: _V1, e: dict[str, Any], pos: int) -> None:
    run = st.run
    kind = e.get("kind")
    st.run.stamp = iso_time(e.get("timestamp"))
    if kind in _V1_SKIP:
        return
    if kind in ("SystemPromptEvent", "SystemPromptUpdateEvent"):
        sp = e.get("system_prompt")
        text = sp if isinstance(sp, str) else content_text(sp)
        run.new("system", pos).add_text(text)
        # The tool set is part of the prompt (and of the provider's cache key): a change of tools alone counts.
        st.key = prompt_key(text, e.get("tools"))
        st.cur = None
    elif kind == "MessageEvent":
        msg = dict_at(e, "llm_message")
        role = msg.get("role")
        dr = run.new("assistant" if role == "assistant" else "user" if role == "user" else "system", pos)
        dr.add_text(content_text(msg.get("content")))
        if role == "assistant":
            _v1_reasoning(dr, msg)
            dr.prompt_key = st.key
            dr.usage = st.usages.get(e.get("llm_response_id"))
        st.cur = None
    elif kind == "ActionEvent":
        _v1_action(st, e, pos)
    elif kind in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
        dr = run.new("tool", pos)
        obs = dict_at(e, "observation")
        dr.add_text(content_text(obs.get("content")) or content_text(e.get("error")))
        call_id = e.get("tool_call_id")
        found = run.result(dr, call_id)
        code = obs.get("exit_code")
        dr.exit_code = code if isinstance(code, int) and code >= 0 else None
        if obs.get("is_error") or kind != "ObservationEvent":
            dr.is_error = True
            if found is not None:
                run.call_failed(call_id)
        st.cur = None
    elif kind in ("Condensation", "CondensationSummaryEvent", "CondensationRequest"):
        dr = run.new("system", pos)
        dr.add_text(content_text(e.get("summary")) or "condensed")
        dr.add_flag(COMPACTION)
        st.cur = None


def _v1_action(st: _V1, e: dict[str, Any], pos: int) -> None:
    run = st.run
    rid = e.get("llm_response_id")
    cur = st.cur
    if cur is None or rid is None or cur.key != rid or run.last is not cur:
        cur = st.cur = run.new("assistant", pos, key=rid)
        cur.prompt_key = st.key
        cur.usage = st.usages.get(rid)
        cur.add_text(content_text(e.get("thought")))
        _v1_reasoning(cur, e)
    tc = dict_at(e, "tool_call")
    name = str(tc.get("name") or e.get("tool_name") or "tool")
    call, edits = interpret_call(name, parse_arguments(tc.get("arguments")), e.get("tool_call_id"))
    action = e.get("action")
    if isinstance(action, dict) and action.get("kind") == "FinishAction" and call.kind != "finish":
        call = ToolCall(call.name, call.arguments, "finish", call.paths, call.id)
    run.add_call(cur, call, edits)


def _event_order(p: Path) -> tuple[int, str]:
    m = _EVENT_NO.search(p.name)
    return (int(m.group(1)) if m else 1 << 30, p.name)


def _v1_reasoning(dr: Draft, e: dict[str, Any]) -> None:
    rc = e.get("reasoning_content")
    if isinstance(rc, str) and rc:
        dr.add_reasoning(rc)
    blocks = e.get("thinking_blocks")
    if isinstance(blocks, list):
        for b in blocks:
            if isinstance(b, dict):
                t = b.get("thinking")
                dr.add_reasoning(t if isinstance(t, str) else None, present=True)


def _v1_usages(conv: Path) -> dict[Any, Usage]:
    """Per-call usage from base_state.json, keyed by response id ({} when absent or unreadable)."""
    try:
        state = load_document(conv / "base_state.json")
    except ReviewError:  # usage is optional; a broken state file must not stop loading
        return {}
    out: dict[Any, Usage] = {}
    stats = state.get("stats") if isinstance(state, dict) else None
    metrics = stats.get("usage_to_metrics") if isinstance(stats, dict) else None
    if not isinstance(metrics, dict):
        return out
    for m in metrics.values():
        usages = m.get("token_usages") if isinstance(m, dict) else None
        for u in usages if isinstance(usages, list) else []:
            if isinstance(u, dict) and u.get("response_id"):
                usage = usage_from(u)
                if usage is not None:
                    out[u["response_id"]] = usage
    return out


def v1_cwd(folder: Path) -> str | None:
    """The conversation's working directory from base_state.json, when recorded."""
    try:
        state = load_document(folder / "base_state.json")
    except ReviewError:  # optional metadata
        return None
    ws = state.get("workspace") if isinstance(state, dict) else None
    wd = ws.get("working_dir") if isinstance(ws, dict) else None
    return wd if isinstance(wd, str) else None
