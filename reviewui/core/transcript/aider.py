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
import reviewui.core.transcript.aider_inputs as aider_inputs
from reviewui.core.transcript.aider_inputs import Block
from reviewui.core.transcript.builder import Draft, Run
from reviewui.core.transcript.detect import AIDER_HEADER
from reviewui.core.transcript.model import FileEdit, ToolCall, Usage
from reviewui.core.transcript.source import LineCounter, open_text

HEADER = AIDER_HEADER
"""The line that opens every session in an Aider history file."""

_SEARCH = re.compile(r"^<{5,9} SEARCH\s*$")
_DIVIDER = re.compile(r"^={5,9}\s*$")
_REPLACE = re.compile(r"^>{5,9} REPLACE\s*$")
_FENCE = re.compile(r"^(```|~~~|<source>)")
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$")
_FAILED = re.compile(r"failed to exactly match lines in (.+?)\s*$")
_INTERRUPT = ("^C KeyboardInterrupt", "^C again to exit")
_API_ERROR = re.compile(r"^(?:Unexpected error: |litellm\.)|(?:APIError|APIConnectionError|InternalServerError|RateLimitError)")
_TOKEN_LIMIT = "has hit a token limit"
_COMMAND = re.compile(r"^(?:/(?:run|test)\s+|!)(\S.*)$")
_ANSWER = re.compile(r"^\(y/n/instructions\):?\s*(.*)$")
_QUESTION = re.compile(r"^(.*\?)\s*(?:\(y/n/instructions\):?|\(Y\)es/\(N\)o[^:]*:)?\s+(?!\()(\S.*)$")
_ASKS = ("(y/n/instructions)", "(Y)es/(N)o", "Attempt to fix lint errors?", "Attempt to fix test errors?")
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
        self.command: Draft | None = None  # the user turn whose `/run`, `/test` or `!` output is being read
        self.output: Draft | None = None  # that command's output turn
        self.cut = False  # the latest reply ends inside a SEARCH/REPLACE block: its stream was cut off
        self.pre_interrupt = False  # a `^C` came between the latest request and its reply
        self.raw = False  # the running command's output had lines Aider wrote unquoted
        self.question: str | None = None  # a question Aider asked whose answer is on the next line
        self.not_typed: set[int] = set()  # lines of `#### ` blocks that are the model's headings

    def _whole_files(self, reply: Draft, applied: set[str]) -> None:
        """Record the whole-file edits Aider applied (the `whole` and architect/editor-whole formats).

        Such a reply carries no SEARCH block: the file is named on a line before a
        fence holding its entire new content, and `Applied edit to X` follows.
        """
        named = {p for c in reply.calls for p in c.paths}
        blocks = _whole_blocks("\n".join(reply.texts))
        for path in sorted(applied - named):
            content = blocks.get(path)
            if content is None:
                continue
            self.n += 1
            cid = f"aider-{self.n}"
            edit = FileEdit(path, "write", None, content, None, None, cid)
            self.run.add_call(reply, ToolCall("whole", {"path": path, "content": content}, "write", (path,), cid), [edit])
            reply.stop = "tool_use"

    def close_tool(self) -> None:
        """Settle which of the reply's edits applied, once its output block is complete.

        A reply whose stream was cut (a `^C`, an API error, a SEARCH block never
        closed) applied nothing unless Aider reported an applied edit; it says why.
        """
        tool, reply = self.tool, self.reply
        self.tool = None
        if reply is None:
            return
        text = "\n".join(tool.texts) if tool is not None else ""
        lines = text.split("\n")
        applied = {m.group(1).strip() for m in (_APPLIED.match(ln) for ln in lines) if m}
        failed = {m.group(1).strip() for m in (_FAILED.search(ln) for ln in lines) if m}
        error = next((ln for ln in lines if _API_ERROR.search(ln)), None)
        # Aider reports a finished reply's tokens and then its edits (applied or failed to match); a `^C`
        # with no such report, before the reply or after it, stopped the reply while it was written.
        reported = bool(failed) or any(_TOKENS.match(ln) for ln in lines)
        interrupted = self.cut or (not reported and (
            self.pre_interrupt or (bool(reply.calls) and any(x in text for x in _INTERRUPT))))
        if _TOKEN_LIMIT in text:
            reply.stop = "max_tokens"
        if not applied and (error is not None or interrupted):
            reply.stop = "error" if error is not None else "unknown"
            reply.note = (f"cut off by an API error ({error.strip()[:160]})" if error is not None
                          else "interrupted (^C) while it was written") + (
                "; none of its edits was applied" if reply.calls else "")
            for call in reply.calls:
                if tool is not None:
                    self.run.result(tool, call.id)
                self.run.call_failed(call.id)
            # Blocks never applied are not edits: no writes-tests or edits-existing-test rests on them.
            reply.calls = [ToolCall(c.name, c.arguments, "other", c.paths, c.id) for c in reply.calls]
            self.reply = None
            return
        if applied:
            self._whole_files(reply, applied)
        if tool is None or not reply.calls:
            return
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
            st.reply = st.output = None
            st.command = _user_command(st, dr, body)
            st.pre_interrupt = st.raw = False
            i = j
        elif _quoted(ln):
            i = _quoted_block(st, lines, i, end)
        elif not ln.strip():
            i += 1
        elif _ANSWER.match(ln.strip()):
            _answer(st, _ANSWER.match(ln.strip()).group(1), i + 1)  # type: ignore[union-attr]
            i += 1
        elif st.command is not None:
            _output(st, i + 1).texts.append(ln.rstrip())
            st.raw = True
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


def _user_command(st: _State, dr: Draft, body: list[str]) -> Draft | None:
    """Register the shell command a `/run X`, `/test X` or `!X` input ran; None for any other input."""
    m = _COMMAND.match(body[0].strip()) if len(body) == 1 else None
    if m is None:
        return None
    st.n += 1
    st.run.add_call(dr, ToolCall("run", {"command": m.group(1).strip()}, "shell", (), f"aider-{st.n}"), [])
    return dr


def _output(st: _State, line: int) -> Draft:
    """The output turn of the running command (made on its first line)."""
    if st.output is None:
        st.output = st.run.new("tool", line)
        st.output.kind = "command-output"
        if st.command is not None and st.command.calls:
            st.run.result(st.output, st.command.calls[-1].id)
    return st.output


def _answer(st: _State, text: str, line: int, question: str | None = None) -> None:
    """The user's reply to a question Aider asked (`(y/n/instructions)`, `(Y)es/(N)o`, `Attempt to fix …?`)."""
    st.close_tool()
    st.command = None
    dr = st.run.new("user", line)
    dr.kind = "answer"
    dr.add_text(text.strip())
    asked = question or st.question
    dr.note = f"answer to Aider's question: {asked}" if asked else "answer to Aider's question"
    st.question = None


def _whole_blocks(text: str) -> dict[str, str]:
    """The whole-file blocks of a reply: a line naming the file, then a fence holding its entire new content."""
    lines = text.split("\n")
    out: dict[str, str] = {}
    i = 0
    while i + 1 < len(lines):
        name = lines[i].strip().strip("`*").strip()
        fence = _FENCE.match(lines[i + 1].strip())
        if not name or " " in name or name.endswith(":") or fence is None or _FENCE.match(name):
            i += 1
            continue
        j = i + 2
        while j < len(lines) and not lines[j].strip().startswith(fence.group(1)):
            j += 1
        if j < len(lines):
            out[name] = "\n".join(lines[i + 2:j]) + "\n"
        i = j + 1
    return out


def _quoted_block(st: _State, lines: list[str], i: int, end: int) -> int:
    """Read a run of `> ` lines from `i`: Aider's output, a command's output, or a question and its answer."""
    # After output written unquoted, a quoted block that repeats its first line is Aider's echo of it
    # into the chat; any other (pytest marks a failing line with `> `) is more of the output.
    first = st.output.texts[0].strip() if st.output is not None and st.output.texts else None
    echo = st.raw and first is not None and lines[i][2:].strip() == first
    if st.command is not None and st.raw and not echo:
        _output(st, i + 1).texts.append(lines[i].rstrip())
        return i + 1
    j = i
    while j < end and _quoted(lines[j]):
        text = lines[j][2:].rstrip()
        q = _QUESTION.match(text) if any(a in text for a in _ASKS) else None
        if q is not None:
            _answer(st, q.group(2), j + 1, q.group(1))
        elif text.endswith("?") and text.startswith("Add the output to the chat"):
            st.question = text  # its answer comes on the next, unquoted line
        elif st.command is not None and not echo:
            _output(st, j + 1).texts.append(text)
        else:
            if st.tool is None:
                st.tool = st.run.new("tool", j + 1)
            st.tool.texts.append(text)
            _usage(st, text)
        j += 1
    if echo:
        st.command = None  # the echo closes the command's output
    return j


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
    prev = run.last
    st.pre_interrupt = prev is not None and prev.role == "tool" and any(x in t for t in prev.texts for x in _INTERRUPT)
    st.cut = False
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
        if j >= len(block):
            st.cut = True  # the reply ends inside this block: it was never finished, so never applied
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
