"""Loader for Aider chat histories (`.aider.chat.history.md`).

The file is Markdown that Aider appends to: `# aider chat started at …`
opens a session, `#### ` lines are what the user typed, `> ` lines are
Aider's own output (the command line, "Applied edit to …", token counts,
lint and test output, edit failures), and everything else is the model's
reply. A reply changes files through SEARCH/REPLACE blocks, each after a line
naming the file; each block is one tool call here. Aider's report after the
reply says which edits applied: a block whose file is named in a "failed to
match" error and in no "Applied edit" line did not change the file.
"""

from __future__ import annotations

import re
from pathlib import Path

from reviewui.core.errors import ReviewError
from reviewui.core.transcript import aider_inputs
from reviewui.core.transcript.aider_inputs import Block
from reviewui.core.transcript.builder import Draft, Run
from reviewui.core.transcript.model import FileEdit, ToolCall, Usage
from reviewui.core.transcript.source import LineCounter, open_text

HEADER = "# aider chat started at"
"""The line that opens every session in an Aider history file."""

_SEARCH = re.compile(r"^<{5,9} SEARCH\s*$")
_DIVIDER = re.compile(r"^={5,9}\s*$")
_REPLACE = re.compile(r"^>{5,9} REPLACE\s*$")
_FENCE = re.compile(r"^(```|~~~|<source>)")
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$")
_FAILED = re.compile(r"failed to exactly match lines in (.+?)\s*$")
_TOKENS = re.compile(r"^Tokens: ([\d.,]+)(k?) sent(?:, ([\d.,]+)(k?) cache write)?(?:, ([\d.,]+)(k?) cache hit)?, ([\d.,]+)(k?) received")


def load(path: Path, counter: LineCounter, instance: str | None = None) -> Run:
    """Read an Aider history into drafts: every session, or only the `instance`-th (1-based).

    Raises ReviewError when `instance` names no session.
    """
    with open_text(path) as f:
        lines = [ln.rstrip("\n").rstrip("\r") for ln in f]
    sessions = [i for i, ln in enumerate(lines) if ln.startswith(HEADER)] or [0]
    bounds = list(zip(sessions, sessions[1:] + [len(lines)], strict=True))
    if instance is not None:
        if not instance.isdigit() or not 1 <= int(instance) <= len(bounds):
            raise ReviewError(f"no session {instance!r} in {path.name} (it has {len(bounds)}: 1–{len(bounds)})")
        bounds = [bounds[int(instance) - 1]]
    st = _State()
    history = aider_inputs.input_history_for(path)
    if history is not None:  # when each request was typed, and which `#### ` lines were never typed
        blocks = _blocks(lines, bounds)
        got = aider_inputs.match(blocks, aider_inputs.read_inputs(history), history.name)
        st.times = got.times
        st.not_typed = {i for b in blocks if b.start in got.not_typed for i in range(b.start, b.end)}
        st.run.notes.extend(got.notes)
    for start, end in bounds:
        _session(st, lines, start, end)
    st.close_tool()
    return st.run


class _State:
    def __init__(self) -> None:
        self.run = Run()
        self.reply: Draft | None = None  # the latest assistant reply (its edits await Aider's report)
        self.tool: Draft | None = None  # the `> ` output being collected
        self.n = 0
        self.times: dict[int, str] = {}  # first line of a `#### ` block -> when it was typed
        self.not_typed: set[int] = set()  # lines of `#### ` blocks that are the model's headings

    def close_tool(self) -> None:
        """Settle which of the reply's edits applied, once its output block is complete."""
        tool, reply = self.tool, self.reply
        self.tool = None
        if tool is None or reply is None or not reply.calls:
            return
        text = "\n".join(tool.texts)
        applied = {m.group(1).strip() for m in (_APPLIED.match(ln) for ln in text.split("\n")) if m}
        failed = {m.group(1).strip() for m in (_FAILED.search(ln) for ln in text.split("\n")) if m}
        for call in reply.calls:
            self.run.result(tool, call.id)
            if call.paths and call.paths[0] in failed and call.paths[0] not in applied:
                tool.is_error = True
                self.run.call_failed(call.id)
        self.reply = None


def _session(st: _State, lines: list[str], start: int, end: int) -> None:
    i = start
    run = st.run
    if i < end and lines[i].startswith(HEADER):
        st.close_tool()
        run.new("system", i + 1).add_text(lines[i][2:])
        i += 1
    while i < end:
        ln = lines[i]
        if ln.startswith("#### ") and i not in st.not_typed:
            st.close_tool()
            j = i
            body: list[str] = []
            while j < end and lines[j].startswith("#### "):
                body.append(lines[j][5:].rstrip())
                j += 1
            dr = run.new("user", i + 1)
            dr.add_text("\n".join(body))
            typed = st.times.get(i)
            dr.time = typed.replace(" ", "T", 1) if typed else None  # Aider writes `2025-05-04 17:06:57.1`: ISO 8601 has a T
            st.reply = None
            i = j
        elif _quoted(ln):
            if st.tool is None:
                st.tool = run.new("tool", i + 1)
            j = i
            while j < end and _quoted(lines[j]):
                text = lines[j][2:]
                text = text.rstrip()
                st.tool.texts.append(text)
                _usage(st, text)
                j += 1
            i = j
        elif not ln.strip():
            i += 1
        else:
            st.close_tool()
            j = i
            while j < end and not lines[j].startswith(HEADER) and not _quoted(lines[j]) and (
                not lines[j].startswith("#### ") or j in st.not_typed
            ):
                j += 1
            _reply(st, lines[i:j], i + 1)
            i = j


def _blocks(lines: list[str], bounds: list[tuple[int, int]]) -> list[Block]:
    """The chat's `#### ` blocks in the sessions read, each with where it sits."""
    out: list[Block] = []
    for start, end in bounds:
        session = lines[start][len(HEADER):].strip() if lines[start].startswith(HEADER) else None
        i = start
        while i < end:
            if not lines[i].startswith("#### "):
                i += 1
                continue
            j = i
            while j < end and lines[j].startswith("#### "):
                j += 1
            k = i - 1
            while k >= start and not lines[k].strip():
                k -= 1
            reply = k >= start and not lines[k].startswith(HEADER) and not _quoted(lines[k])
            out.append(Block(i, j, "\n".join(ln[5:] for ln in lines[i:j]), reply, session))
            i = j
    return out


def _quoted(ln: str) -> bool:
    # `> ` is Aider's own output; `>>>>>>> REPLACE` and `>>> ` prompts are the model's.
    return ln.startswith("> ") or ln == ">"


def _usage(st: _State, text: str) -> None:
    m = _TOKENS.match(text)
    if m is None or st.reply is None:
        return
    sent = _num(m.group(1), m.group(2))
    hit = _num(m.group(5), m.group(6)) if m.group(5) else 0
    st.reply.usage = Usage(sent, min(hit, sent), _num(m.group(7), m.group(8)), 0)


def _num(digits: str, k: str) -> int:
    value = float(digits.replace(",", ""))
    return int(value * 1000) if k else int(value)


def _reply(st: _State, block: list[str], lineno: int) -> None:
    run = st.run
    dr = run.new("assistant", lineno)
    dr.add_text("\n".join(block).strip("\n"))
    i = 0
    while i < len(block):
        if not _SEARCH.match(block[i]):
            i += 1
            continue
        path = _file_before(block, i)
        search: list[str] = []
        replace: list[str] = []
        j = i + 1
        while j < len(block) and not _DIVIDER.match(block[j]):
            search.append(block[j])
            j += 1
        j += 1
        while j < len(block) and not _REPLACE.match(block[j]):
            replace.append(block[j])
            j += 1
        i = j + 1
        if path is None:
            continue
        st.n += 1
        cid = f"aider-{st.n}"
        old, new = "\n".join(search), "\n".join(replace)
        if search and any(s.strip() for s in search):
            edit = FileEdit(path, "replace", old, new, None, True, cid)
        else:
            edit = FileEdit(path, "create", None, new, None, None, cid)
        run.add_call(dr, ToolCall("search_replace", {"path": path, "search": old, "replace": new}, "edit", (path,), cid), [edit])
    dr.stop = "tool_use" if dr.calls else "end"
    st.reply = dr


def _file_before(block: list[str], i: int) -> str | None:
    """The file a SEARCH block edits: the line before its fence (or before the block itself)."""
    j = i - 1
    if j >= 0 and _FENCE.match(block[j].strip()):
        j -= 1
    while j >= 0 and not block[j].strip():
        j -= 1
    if j < 0:
        return None
    name = block[j].strip().strip("`*").strip()
    if not name or " " in name or name.endswith(":") or _FENCE.match(name):
        return None
    return name
