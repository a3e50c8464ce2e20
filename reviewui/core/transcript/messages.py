"""Loader for plain message lists: OpenAI-shaped, Anthropic-shaped, and mini-swe-agent.

Accepted containers: a JSON array of messages, an object holding
`messages` (mini-swe-agent `.traj.json`, OpenHands LLM logs with their
`response`, Anthropic requests with a top-level `system`), or JSONL with one
message (or one chat-completion response) per line. Each message is one
turn. Reasoning, tool calls, finish reasons and usage are read from the
message itself or from the raw response stored beside it
(`extra.response` in mini-swe-agent).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

from reviewui.core.transcript.builder import SHAPE_ERRORS, Draft, Run
from reviewui.core.transcript.normalize import content_text, norm_stop, parse_arguments, prompt_key, usage_from
from reviewui.core.transcript.source import LineCounter, iter_jsonl
from reviewui.core.transcript.timestamps import iso_time
from reviewui.core.transcript.textcalls import result_tool, text_tool_calls
from reviewui.core.transcript.tools import interpret_call
from reviewui.core.transcript.jsonget import str_at

_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL)
_FENCE = re.compile(r"```(?:mswea_bash_command|bash|sh)[ \t]*\n(.*?)\n```", re.DOTALL)
_RETURNCODE = re.compile(r"^\s*<returncode>(-?\d+)</returncode>")
_EXIT_NOTE = re.compile(r"\[The command completed with exit code (-?\d+)\.\]|\[Command finished with exit code (-?\d+)\]")
_FAILED_EDIT_PREFIXES = (
    "error", "ran into", "invalid", "no replacement was performed", "string to replace not found",
    "file already exists", "the path ", "parameter `",
)


class State:
    """A message-list run being built: the drafts, the current system prompt's key, the flavor."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.run = Run()
        self.system_key: str | None = None
        self.seen_assistant = False
        self.text_calls: list[str] = []  # ids of tool calls written as text, awaiting their results


def load_document(doc: Any, fmt: str, counter: LineCounter) -> Run:
    """Read a parsed JSON document (array or object holding `messages`) into drafts."""
    st = State(fmt)
    if isinstance(doc, dict) and "messages" not in doc and ("role" in doc or "choices" in doc):
        doc = [doc]  # a one-line JSONL file: one message
    if isinstance(doc, dict):
        system = doc.get("system")
        if system:
            dr = st.run.new("system", 0)
            text = content_text(system)
            dr.add_text(text)
            st.system_key = prompt_key(text, doc.get("tools"))
        messages = doc.get("messages")
        response = doc.get("response")
    else:
        messages, response = doc, None
    for i, m in enumerate(messages if isinstance(messages, list) else []):
        guarded(st, m, i + 1, counter)
    if isinstance(response, dict):
        # An OpenHands LLM-call log stamps the call (`timestamp`, epoch seconds, written as the response
        # came back): that is the reply's time; the request's messages carry none.
        guarded(st, response, None, counter, iso_time(doc.get("timestamp")) if isinstance(doc, dict) else None)
    return st.run


def guarded(st: State, m: Any, lineno: int | None, counter: LineCounter, stamp: str | None = None) -> None:
    """Add message `m` to the run (at `stamp` when it carries no time of its own); one of an unexpected
    shape is counted in `counter`, not fatal."""
    if not isinstance(m, dict):
        counter.skipped += 1
        return
    extra = m.get("extra")
    st.run.stamp = iso_time(extra.get("timestamp") if type(extra) is dict else m.get("timestamp")) or stamp
    try:
        message(st, m, lineno)
    except SHAPE_ERRORS:
        counter.skipped += 1


def load_jsonl(path: Path, counter: LineCounter, fmt: str) -> Run:
    """Read JSONL with one message (or chat-completion response) per line into drafts."""
    st = State(fmt)
    for lineno, m in iter_jsonl(path, counter):
        guarded(st, m, lineno, counter)
    return st.run


def _from_response(resp: dict[str, Any]) -> dict[str, Any]:
    """Turn a chat-completion response into its assistant message (with finish reason and usage)."""
    choices = resp.get("choices")
    msg: dict[str, Any] = {}
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        inner = choices[0].get("message")
        if isinstance(inner, dict):
            msg = dict(inner)
        msg.setdefault("finish_reason", choices[0].get("finish_reason"))
    msg.setdefault("role", "assistant")
    msg.setdefault("usage", resp.get("usage"))
    return msg


def message(st: State, m: dict[str, Any], lineno: int | None) -> None:
    """Add one message (any supported shape) to the run as one turn."""
    if "choices" in m and "role" not in m:
        m = _from_response(m)
    role = m.get("role")
    run = st.run
    content = m.get("content")
    if role in ("system", "developer"):
        dr = run.new("system", lineno)
        text = content_text(content)
        dr.add_text(text)
        st.system_key = prompt_key(text)
    elif role == "assistant":
        st.seen_assistant = True
        _assistant(st, m, lineno)
    elif role in ("tool", "function", "ipython"):
        _tool(st, m, lineno)
    elif role == "user":
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        text = content_text(content)
        if results:
            dr = run.new("tool", lineno)
            for b in results:
                run.result(dr, b.get("tool_use_id"))
                if b.get("is_error"):
                    dr.is_error = True
                    run.call_failed(b.get("tool_use_id"))
            dr.add_text(text)
        elif st.fmt == "mini-swe-agent" and st.seen_assistant and _RETURNCODE.match(text):
            _tool(st, m, lineno)
        elif st.text_calls and result_tool(text) is not None:
            # The answer to a tool call the model wrote as text.
            dr = run.new("tool", lineno)
            dr.add_text(text)
            run.result(dr, st.text_calls.pop(0))
            note = _EXIT_NOTE.search(text[-300:])
            if note:
                dr.exit_code = int(note.group(1) or note.group(2))
        else:
            run.new("user", lineno).add_text(text)
    else:
        # mini-swe-agent's closing `exit` message and any unknown role: context, not a party.
        run.new("system", lineno).add_text(content_text(content))


def _response_of(m: dict[str, Any]) -> dict[str, Any]:
    extra = m.get("extra")
    resp = extra.get("response") if isinstance(extra, dict) else None
    if not isinstance(resp, dict):
        resp = m.get("response")
    return resp if isinstance(resp, dict) else {}


def _assistant(st: State, m: dict[str, Any], lineno: int | None) -> None:
    run = st.run
    dr = run.new("assistant", lineno)
    dr.prompt_key = st.system_key
    content = m.get("content")
    if isinstance(content, str):
        _text_with_think(dr, content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                dr.add_text(block)
                continue
            if not isinstance(block, dict):
                continue
            bt = block.get("type")
            if bt == "thinking":
                th = block.get("thinking")
                dr.add_reasoning(th if isinstance(th, str) else None)
            elif bt == "reasoning":  # Inspect AI's reasoning part
                rs = block.get("reasoning")
                dr.add_reasoning(rs if isinstance(rs, str) and not block.get("redacted") else None)
            elif bt == "redacted_thinking":
                dr.add_reasoning(None, present=True)
            elif bt == "tool_use":
                name = str_at(block, "name", "tool")
                call, edits = interpret_call(name, block.get("input"), block.get("id"))
                run.add_call(dr, call, edits)
            elif isinstance(block.get("text"), str):
                _text_with_think(dr, block["text"])
    _reasoning_fields(dr, m)
    calls = m.get("tool_calls")
    if isinstance(calls, list):
        for c in calls:
            if not isinstance(c, dict):
                continue
            inner = c.get("function")
            fn = inner if isinstance(inner, dict) else c
            name = str_at(fn, "name", "function")
            call, edits = interpret_call(name, parse_arguments(fn.get("arguments")), c.get("id"))
            run.add_call(dr, call, edits)
    elif isinstance(m.get("function_call"), dict):
        fn = m["function_call"]
        call, edits = interpret_call(str(fn.get("name") or "function"), parse_arguments(fn.get("arguments")))
        run.add_call(dr, call, edits)
    if not dr.calls and st.fmt == "mini-swe-agent":
        for cmd in _mini_actions(m, "\n".join(dr.texts)):
            call, edits = interpret_call("bash", {"command": cmd})
            run.add_call(dr, call, edits)
    elif not dr.calls and dr.texts:
        # A model without native function calling writes its calls into the text.
        st.text_calls = []
        for name, args in text_tool_calls("\n".join(dr.texts)):
            cid = f"text-{len(run.drafts)}-{len(dr.calls)}"
            call, edits = interpret_call(name, args, cid)
            run.add_call(dr, call, edits)
            st.text_calls.append(cid)
    resp = _response_of(m)
    stop = m.get("finish_reason") or m.get("stop_reason")
    choices = resp.get("choices")
    if not stop and isinstance(choices, list) and choices and isinstance(choices[0], dict):
        stop = choices[0].get("finish_reason")
    dr.stop = norm_stop(stop or resp.get("stop_reason"))
    dr.usage = usage_from(m.get("usage")) or usage_from(resp.get("usage"))


def _text_with_think(dr: Draft, text: str) -> None:
    if "<think>" in text:
        for th in _THINK.findall(text):
            dr.add_reasoning(th.strip() or None)
        text = _THINK.sub("", text)
    dr.add_text(text)


def _reasoning_fields(dr: Draft, m: dict[str, Any]) -> None:
    """Read reasoning from the fields providers put it in (first one found wins)."""
    for key in ("reasoning_content", "reasoning"):
        v = m.get(key)
        if isinstance(v, str) and v:
            dr.add_reasoning(v)
            return
    details = m.get("reasoning_details")
    if isinstance(details, list) and details:
        for d in details:
            if isinstance(d, dict):
                t = d.get("text") or d.get("summary")
                dr.add_reasoning(t if isinstance(t, str) else None, present=True)
        return
    blocks = m.get("thinking_blocks")
    if isinstance(blocks, list) and blocks:
        for b in blocks:
            if isinstance(b, dict):
                t = b.get("thinking")
                dr.add_reasoning(t if isinstance(t, str) else None, present=True)
        return
    psf = m.get("provider_specific_fields")
    if isinstance(psf, dict) and isinstance(psf.get("reasoning_content"), str):
        dr.add_reasoning(psf["reasoning_content"] or None, present=False)


def _mini_actions(m: dict[str, Any], text: str) -> Iterable[str]:
    extra = m.get("extra")
    actions = extra.get("actions") if isinstance(extra, dict) else None
    if isinstance(actions, list) and actions:
        return [a["command"] for a in actions if isinstance(a, dict) and isinstance(a.get("command"), str)]
    if "```" not in text:
        return []
    return _FENCE.findall(text)


def _tool(st: State, m: dict[str, Any], lineno: int | None) -> None:
    run = st.run
    dr = run.new("tool", lineno)
    text = content_text(m.get("content"))
    dr.add_text(text)
    call_id = m.get("tool_call_id")
    found = run.result(dr, call_id)
    extra = m.get("extra")
    code = extra.get("returncode") if isinstance(extra, dict) else None
    if not isinstance(code, int):
        rc = _RETURNCODE.match(text)
        note = _EXIT_NOTE.search(text[-300:]) if rc is None else None
        code = int(rc.group(1)) if rc else (int(note.group(1) or note.group(2)) if note else None)
    dr.exit_code = code
    failed_edit = (
        found is not None
        and found[1].kind in ("edit", "write")
        and text[:200].lstrip().lower().startswith(_FAILED_EDIT_PREFIXES)
    )
    if m.get("is_error") or failed_edit or code not in (None, 0):
        dr.is_error = True
        if found is not None and found[1].kind in ("edit", "write"):
            run.call_failed(call_id)
