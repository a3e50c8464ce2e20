"""Loader for Claude Code session JSONL (`~/.claude/projects/<cwd>/<session>.jsonl`).

Claude Code writes one line per content block, so the lines that share a
`message.id` are one model response and one turn; each of them repeats the
response's usage, which is counted once. `stop_reason` is always null in
these files: truncation shows up as a synthetic `max_output_tokens` API-error
line instead. A tool's result line carries `toolUseResult`, whose
`structuredPatch` / `originalFile` say exactly what an Edit or Write did.
Progress, snapshots, queue operations and meta lines are not turns; subagent
turns (inline sidechain lines or `agent_progress` lines) are, tagged with the
Task call that started them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import reviewui.core.transcript.claude_lines as claude_lines
from reviewui.core.transcript.builder import SHAPE_ERRORS, Draft, Run
from reviewui.core.transcript.model import COMPACTION, FileEdit
from reviewui.core.transcript.normalize import content_text, norm_stop, text_size
from reviewui.core.transcript.patches import render_structured_patch
from reviewui.core.transcript.source import LineCounter, iter_jsonl
from reviewui.core.transcript.timestamps import iso_time
from reviewui.core.transcript.tools import interpret_call

_TRUNCATION_ERRORS = ("max_output_tokens", "max_tokens")


_TASK_TOOLS = ("Task", "Agent")


class _Subagents:
    """Subagent turns in a main session, each grouped under the Task call that started it."""

    def __init__(self) -> None:
        self.cur: dict[str, Draft | None] = {}  # group → the assistant draft its lines are grouped into
        self.responses: dict[Any, Draft] = {}
        self.open_tasks: list[str] = []  # Task calls still running (for inline sidechain lines)

    def line(self, run: Run, d: dict[str, Any], lineno: int, group: str) -> None:
        """Add one subagent line (an inline sidechain line or a progress line's message) to `group`."""
        n = len(run.drafts)
        if d.get("type") == "assistant":
            self.cur[group] = _assistant(run, self.cur.get(group), d, lineno, self.responses)
        elif not d.get("isMeta"):
            _user(run, d, lineno)
            self.cur[group] = None
        for dr in run.drafts[n:]:
            dr.group = group
            dr.prompt_key = None  # a subagent has its own prompt; the main run's prefix did not change
        cur = self.cur.get(group)
        if cur is not None:
            cur.group = group
            cur.prompt_key = None


def load(path: Path, counter: LineCounter) -> Run:
    """Read a Claude Code session (or subagent) file into drafts (malformed lines counted in `counter`).

    A subagent file (every line `isSidechain`) loads as its own transcript;
    in a main session, subagent turns (inline sidechain lines, or the
    `agent_progress` lines newer versions write) are kept, each tagged with
    the id of the Task call that started it.
    """
    run = Run()
    cur: Draft | None = None  # the assistant draft lines are being grouped into
    responses: dict[Any, Draft] = {}  # message id → its turn (tool results can interleave its lines)
    subagent_file: bool | None = None
    subs = _Subagents()
    # Through the module, not a bound name: a test swaps the parser to watch which lines it reads.
    for lineno, d in iter_jsonl(path, counter, claude_lines.hook_progress, claude_lines.parse_line):
        t = d.get("type")
        ts = d.get("timestamp")  # Claude Code writes ISO 8601 strings: taken as they are (the common case, kept short)
        run.stamp = ts if type(ts) is str else iso_time(ts)
        if t == "assistant" or t == "user":
            if type(d.get("message")) is not dict:
                counter.skipped += 1  # a turn line without its message: malformed
                continue
            if subagent_file is None:
                subagent_file = bool(d.get("isSidechain"))
            try:
                if d.get("isSidechain") and not subagent_file:
                    # Under a running Task call: that subagent's turn. With none running it is
                    # Claude Code's own side traffic (the "Warmup" exchanges), not the run.
                    if subs.open_tasks:
                        subs.line(run, d, lineno, subs.open_tasks[-1])
                    continue
                if t == "assistant":
                    cur = _assistant(run, cur, d, lineno, responses)
                    if cur.calls and cur.calls[-1].name in _TASK_TOOLS:
                        subs.open_tasks.append(cur.calls[-1].id or "task")
                elif not d.get("isMeta"):
                    _user(run, d, lineno)
                    cur = None
                    _close_tasks(run, subs)
            except SHAPE_ERRORS:
                counter.skipped += 1
                continue
            if run.cwd is None:
                _set_cwd(run, d)
        elif t == "progress":
            data = d.get("data")
            if type(data) is dict and data.get("type") == "agent_progress" and type(data.get("message")) is dict:
                inner = data["message"]
                if type(inner.get("message")) is dict and inner.get("type") in ("user", "assistant"):
                    group = d.get("parentToolUseID")
                    try:
                        subs.line(run, inner, lineno, group if isinstance(group, str) else "subagent")
                    except SHAPE_ERRORS:
                        counter.skipped += 1
        elif t == "system" and d.get("subtype") == "compact_boundary":
            try:
                _boundary(run, d, lineno)
            except SHAPE_ERRORS:
                counter.skipped += 1
            cur = None
    return run


def _close_tasks(run: Run, subs: _Subagents) -> None:
    """A main-session tool result for a running Task call ends that subagent."""
    if subs.open_tasks and run.last is not None and run.last.role == "tool" and run.last.result_kind is not None:
        subs.open_tasks.pop()


def _set_cwd(run: Run, d: dict[str, Any]) -> None:
    cwd = d.get("cwd")
    if isinstance(cwd, str) and cwd:
        run.cwd = cwd


def _boundary(run: Run, d: dict[str, Any], lineno: int) -> None:
    dr = run.new("system", lineno)
    meta = d.get("compactMetadata")
    dr.add_text(content_text(d.get("content")) or "compacted")
    if isinstance(meta, dict) and meta.get("preTokens"):
        dr.add_text(f"(context was {meta.get('preTokens')} tokens, trigger {meta.get('trigger')})")
    dr.add_flag(COMPACTION)


def _assistant(run: Run, cur: Draft | None, d: dict[str, Any], lineno: int, responses: dict[Any, Draft]) -> Draft:
    # The hot path of a 100 MB session: one call per assistant line, so every lookup counts.
    msg = d["message"]
    if d.get("isApiErrorMessage"):
        return _api_error(run, cur, d, msg, lineno)
    mid = msg.get("id") or d.get("requestId") or d.get("uuid")
    if cur is None or cur.key != mid or mid is None:
        found = responses.get(mid) if mid is not None else None
        if found is not None:
            cur = found
        else:
            if msg.get("model") == "<synthetic>":
                return _api_error(run, cur, d, msg, lineno)
            cur = run.new("assistant", lineno, key=mid)
            # What shapes Claude Code's system prompt that the file records: model, cwd, CLI version.
            cur.prompt_key = (msg.get("model"), d.get("cwd"), d.get("version"))
            if mid is not None:
                responses[mid] = cur
    cur.last_uuid = d.get("uuid")
    content = msg.get("content")
    if type(content) is list:
        for block in content:
            bt = block.get("type")
            if bt == "text":
                text = block.get("text")
                if type(text) is str and text:
                    cur.texts.append(text)
            elif bt == "thinking":
                th = block.get("thinking")
                if type(th) is str and th:
                    cur.reasoning.append(th)
                    cur.reasoning_size += len(th) if th[:9] != "[REDACTED" else text_size(th)
                cur.has_reasoning = True
            elif bt == "tool_use" or bt == "server_tool_use":
                name = block.get("name")
                call, edits = interpret_call(name if type(name) is str else "tool", block.get("input"), block.get("id"))
                run.add_call(cur, call, edits)
            elif bt == "redacted_thinking":
                cur.has_reasoning = True
    elif type(content) is str and content:
        cur.texts.append(content)
    raw = msg.get("usage")
    if raw:
        # Every line of a response repeats its usage and output_tokens is a streaming
        # snapshot that only grows: the latest line's is the response's (normalized once,
        # at finalize).
        cur.raw_usage = raw
    reason = msg.get("stop_reason")  # null in every Claude Code version since 1.0.10
    if reason:
        cur.stop = norm_stop(reason) or cur.stop
    return cur


def _api_error(run: Run, cur: Draft | None, d: dict[str, Any], msg: dict[str, Any], lineno: int) -> Draft:
    error = d.get("error") if isinstance(d.get("error"), str) else ""
    text = content_text(msg.get("content"))
    truncated = error in _TRUNCATION_ERRORS or ("output token maximum" in text)
    stop = "max_tokens" if truncated else "error"
    parent = d.get("parentUuid")
    if truncated and cur is not None and run.last is cur and not cur.calls and parent == cur.last_uuid:
        # The response that ran out of tokens was partly written (its thinking, say):
        # that response is the truncated turn.
        cur.stop = stop
        return cur
    dr = run.new("assistant", lineno, key=None)
    dr.add_text(text)
    dr.stop = stop
    return dr


def _user(run: Run, d: dict[str, Any], lineno: int) -> None:
    content = d["message"].get("content")
    if type(content) is list and len(content) == 1:
        b = content[0]
        if type(b) is dict and b.get("type") == "tool_result":
            _one_result(run, d, b, lineno)  # the common case: one line per tool result
            return
    if d.get("isCompactSummary"):
        dr = run.new("system", lineno)
        dr.add_text(content_text(content))
        dr.add_flag(COMPACTION)
        return
    if type(content) is not list:
        run.new("user", lineno).add_text(content_text(content))
        return
    results = [b for b in content if type(b) is dict and b.get("type") == "tool_result"]
    if not results:
        run.new("user", lineno).add_text(content_text(content))
        return
    dr = run.new("tool", lineno)
    for b in results:
        body = b.get("content")
        dr.add_text(body if type(body) is str else content_text(body))
        call_id = b.get("tool_use_id")
        found = run.result(dr, call_id)
        if b.get("is_error"):
            dr.is_error = True
            run.call_failed(call_id)
        elif len(results) == 1:
            _what_it_did(run, dr, d, call_id, found)


def _one_result(run: Run, d: dict[str, Any], b: dict[str, Any], lineno: int) -> None:
    dr = run.new("tool", lineno)
    body = b.get("content")
    if type(body) is str:
        if body:
            dr.texts.append(body)
    else:
        dr.add_text(content_text(body))
    call_id = b.get("tool_use_id")
    found = run.result(dr, call_id)
    if b.get("is_error"):
        dr.is_error = True
        run.call_failed(call_id)
        return
    _what_it_did(run, dr, d, call_id, found)


def _what_it_did(run: Run, dr: Draft, d: dict[str, Any], call_id: Any, found: tuple[Draft, Any] | None) -> None:
    """Read a successful result's `toolUseResult` where it says what an edit did.

    Only a Write's result and a result whose call is not in the file need it;
    for every other call it is a copy of the output, and left unparsed.
    """
    if "toolUseResult" not in d or (found is not None and found[1].kind != "write"):
        return
    extra = claude_lines.tool_use_result(d)
    if type(extra) is not dict:
        return
    if found is not None:
        _enrich_write(run, call_id, extra)
    elif "structuredPatch" in extra:
        _orphan_patch(run, dr, call_id, extra)


def _enrich_write(run: Run, call_id: Any, extra: dict[str, Any]) -> None:
    """A Write's result says whether it created the file or replaced one, and what that held."""
    edits = run.edits_of(call_id)
    if not edits:
        return
    patch = render_structured_patch(extra.get("structuredPatch"))
    original = extra.get("originalFile")
    created = extra.get("type") == "create" or ("originalFile" in extra and original is None)
    out: list[FileEdit] = []
    for e in edits:
        if e.operation != "write":
            out.append(e)
        elif created:
            out.append(FileEdit(e.path, "create", None, e.new, patch, False, e.call_id))
        else:
            old = original if isinstance(original, str) else None
            out.append(FileEdit(e.path, "write", old, e.new, patch, True, e.call_id))
    run.replace_edits(call_id, out)


def _orphan_patch(run: Run, dr: Draft, call_id: Any, extra: dict[str, Any]) -> None:
    """An edit whose call is outside the file (an excerpt): its result alone says what changed."""
    path = extra.get("filePath")
    if not isinstance(path, str):
        return
    patch = render_structured_patch(extra.get("structuredPatch"))
    cid = call_id if isinstance(call_id, str) else None
    content = extra.get("content")
    if extra.get("type") == "create" and isinstance(content, str):
        dr.edits.append(FileEdit(path, "create", None, content, patch, False, cid))
    elif patch is not None:
        dr.edits.append(FileEdit(path, "patch", None, None, patch, True, cid))
