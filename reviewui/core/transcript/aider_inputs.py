"""Aider's input history (`.aider.input.history`), matched to the user turns of its chat history.

Aider keeps what the human typed at its prompt in a prompt_toolkit history
file next to the chat history: for each input a `# <local time>` line, then
the input's lines each prefixed with `+`. Matched to the chat's `#### `
blocks in order, it gives the reviewer three things the chat file lacks:

- when each request was typed (the chat only dates the session's start);
- what was typed that no user turn shows: answers to Aider's questions, and
  inputs of a chat file that was cut short or lost lines;
- which `#### ` lines the human did not type at all: a model reply's own
  Markdown heading (`#### Step 1`) looks exactly like a user turn in the chat
  file, and without this file it is read as one.

A `/code X` (or `/ask X`, `/architect X` …) input is logged twice in the
chat, as typed and then as the message `X` sent to the model; the second is
the same input, not a new one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reviewui.core.transcript.source import open_text

CHAT_SUFFIX = ".aider.chat.history.md"
INPUT_SUFFIX = ".aider.input.history"
_SHOWN = 5
"""Inputs named one by one in a note before "… and N more"."""


@dataclass(frozen=True)
class Input:
    """One input the human typed at Aider's prompt."""

    time: str
    """When, as Aider wrote it (local time, `2025-05-04 17:06:57.158813`); "" when the entry has none."""
    text: str
    """What was typed, lines joined with newlines."""


@dataclass(frozen=True)
class Block:
    """One run of `#### ` lines in the chat history: a user turn, as the chat file shows it."""

    start: int
    """0-based index of its first line."""
    end: int
    """0-based index just past its last line."""
    text: str
    """The lines without their `#### ` prefix and trailing spaces, joined with newlines."""
    after_reply: bool
    """True when the line before it (blanks aside) is a model reply's text, not Aider's output or a header."""
    session_start: str | None
    """The `# aider chat started at` time of its session, when the chat has that header."""


@dataclass(frozen=True)
class Matched:
    """What the input history says about the chat's user turns."""

    times: dict[int, str]
    """Block start line -> when the human typed it."""
    not_typed: tuple[int, ...]
    """Start lines of `#### ` blocks no input matches that sit inside a model reply: the model's headings."""
    notes: tuple[str, ...]
    """Transcript notes for the reviewer."""


def input_history_for(chat: Path) -> Path | None:
    """The input history Aider wrote beside chat history `chat` (`X.aider.chat.history.md` -> `X.aider.input.history`)."""
    if not chat.name.endswith(CHAT_SUFFIX):
        return None
    candidate = chat.with_name(chat.name[: -len(CHAT_SUFFIX)] + INPUT_SUFFIX)
    return candidate if candidate.is_file() else None


def read_inputs(path: Path) -> list[Input]:
    """Every input of a prompt_toolkit history file, oldest first (an entry is its `+` lines; other lines end it)."""
    inputs: list[Input] = []
    time = ""
    lines: list[str] = []
    with open_text(path) as f:
        for raw in f:
            ln = raw.rstrip("\n").rstrip("\r")
            if ln.startswith("+"):
                lines.append(ln[1:])
                continue
            if lines:
                inputs.append(Input(time, "\n".join(lines)))
                lines = []
                time = ""
            if ln.startswith("# "):
                time = ln[2:].strip()
    if lines:
        inputs.append(Input(time, "\n".join(lines)))
    return inputs


def _norm(text: str) -> str:
    # The chat adds two trailing spaces to every line (a Markdown line break) and drops none.
    return "\n".join(ln.rstrip() for ln in text.split("\n")).strip()


def _echoed(command: str) -> str | None:
    """The message a `/cmd message` input sends to the model (logged again as its own `#### ` block)."""
    if not command.startswith("/"):
        return None
    parts = command.split(None, 1)
    return _norm(parts[1]) if len(parts) == 2 and parts[1].strip() else None


def match(blocks: list[Block], inputs: list[Input], name: str) -> Matched:
    """Match the chat's `#### ` blocks to the inputs, in order; say what matched, what did not, and where."""
    times: dict[int, str] = {}
    not_typed: list[int] = []
    untyped: list[Input] = []  # typed, but no user turn of the chat shows it
    lead: list[Input] = []  # typed in this session before the chat's first user turn
    ptr = 0
    echo: tuple[str, str] | None = None  # (message, time) of the last `/cmd message` matched
    matched_any = False
    for b in blocks:
        text = _norm(b.text)
        if b.session_start is not None:  # inputs typed before this session belong to another one
            while ptr < len(inputs) and inputs[ptr].time and inputs[ptr].time < b.session_start:
                ptr += 1
        if echo is not None and text == echo[0]:
            times[b.start] = echo[1]
            echo = None
            continue
        j = next((k for k in range(ptr, len(inputs)) if _norm(inputs[k].text) == text), None)
        if j is None:
            if matched_any and b.after_reply:
                not_typed.append(b.start)
            continue
        (untyped if matched_any else lead).extend(inputs[ptr:j])
        matched_any = True
        times[b.start] = inputs[j].time
        message = _echoed(_norm(inputs[j].text))
        echo = (message, inputs[j].time) if message else None
        ptr = j + 1
    if not matched_any:
        return Matched({}, (), (f"{name}: none of its {len(inputs)} inputs is a user turn of this chat; not used",))
    tail = inputs[ptr:]
    turns = len(blocks) - len(not_typed)
    notes = [f"{name}: {len(times)} of {turns} user turn{'s' if turns != 1 else ''} dated from what the human typed"]
    if untyped:
        notes.append(
            f"{name}: {_count(untyped, 'input')} typed between the chat's user turns that no user turn shows "
            f"(answers to Aider's questions, or lines the chat lost): {_listed(untyped)}"
        )
    if tail:
        notes.append(
            f"{name}: {_count(tail, 'input')} typed after the chat's last user turn (answers to Aider's "
            f"questions, or the chat file ends before the work did): {_listed(tail)}"
        )
    if lead:
        notes.append(
            f"{name}: {_count(lead, 'earlier input')} (from {_clock(lead[0].time)}) typed before the chat's "
            f"first user turn: the chat file starts later than the work"
        )
    if not_typed:
        notes.append(
            f"{name}: {len(not_typed)} '#### ' line{'s' if len(not_typed) != 1 else ''} the human never typed "
            f"read as the model's own heading{'s' if len(not_typed) != 1 else ''} "
            f"(chat line{'s' if len(not_typed) != 1 else ''} {', '.join(str(s + 1) for s in not_typed)})"
        )
    return Matched(times, tuple(not_typed), tuple(notes))


def _count(inputs: list[Input], what: str) -> str:
    return f"{len(inputs)} {what}{'s' if len(inputs) != 1 else ''}"


def _listed(inputs: list[Input]) -> str:
    """The first few inputs with their times, then how many more."""
    listed = "; ".join(f"{_clock(x.time)} {_quote(x.text)}" for x in inputs[:_SHOWN])
    return listed + (f"; … and {len(inputs) - _SHOWN} more" if len(inputs) > _SHOWN else "")


def _clock(time: str) -> str:
    return time.split(".", 1)[0] if time else "(no time)"


def _quote(text: str) -> str:
    one = text.replace("\n", " ⏎ ")
    return repr(one if len(one) <= 80 else one[:79] + "…")
