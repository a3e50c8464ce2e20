"""The normalized transcript model every loader produces.

Whatever the agent wrote (a Claude Code session, a Codex rollout, a message
list, a SWE-agent or OpenHands trajectory), the rest of reviewui sees the
same records: turns in order, each with its text, reasoning, tool calls, file
edits, a normalized stop reason, normalized token usage and the flags that
say why a reviewer might want to look at it. The records are frozen and hold
no UI concerns; `Transcript.to_json()` is the JSON contract of
`reviewui transcript FILE --format json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Role = Literal["user", "assistant", "tool", "system"]
ToolKind = Literal["edit", "write", "shell", "read", "finish", "other"]
Stop = Literal["end", "tool_use", "max_tokens", "context_window", "error", "unknown"]
EditOp = Literal["create", "write", "replace", "insert", "patch", "delete", "shell"]

TRUNCATED = "truncated"
REASONING_ONLY = "reasoning-only"
REASONING_RESENT = "reasoning-resent"
WRITES_TESTS = "writes-tests"
EDITS_EXISTING_TEST = "edits-existing-test"
EDITS_TEST_AFTER_FAILURE = "edits-test-after-failure"
CLAIMS_DONE = "claims-done"
CACHE_MISS = "cache-miss"
PROMPT_CHANGED = "prompt-changed"
TOOL_ERROR = "tool-error"
COMPACTION = "compaction"
TOUCH_DECLARED = "touch-declared"

FLAGS: tuple[str, ...] = (
    TRUNCATED,
    REASONING_ONLY,
    REASONING_RESENT,
    WRITES_TESTS,
    EDITS_EXISTING_TEST,
    EDITS_TEST_AFTER_FAILURE,
    CLAIMS_DONE,
    CACHE_MISS,
    PROMPT_CHANGED,
    TOOL_ERROR,
    COMPACTION,
    TOUCH_DECLARED,
)
"""Every flag name, in the order a turn lists them."""



@dataclass(frozen=True)
class Usage:
    """Token usage of one model call, normalized across providers.

    Providers disagree on whether "input" includes cached tokens (Anthropic
    reports the uncached part only, OpenAI and Codex the whole prompt); here
    `input` is always the whole prompt the call was billed for.
    """

    input: int = 0
    """All prompt tokens of the call, cached ones included (0 when unknown)."""
    cached: int = 0
    """The part of `input` served from the provider's prompt cache."""
    output: int = 0
    """Generated tokens (reasoning included where the provider counts it there)."""
    reasoning: int = 0
    """Generated reasoning tokens, when the provider reports them."""

    def to_json(self) -> dict[str, int]:
        """The contract's usage object: input, cached, output."""
        return {"input": self.input, "cached": self.cached, "output": self.output}


NO_USAGE = Usage()


@dataclass(frozen=True)
class ToolCall:
    """One tool call an assistant turn made."""

    name: str
    """The tool's name as the agent called it (`Edit`, `exec_command`, `str_replace_editor` …)."""
    arguments: Any
    """The parsed arguments (usually a dict; the raw value when it was not JSON)."""
    kind: ToolKind
    """What the call does: `edit`, `write`, `shell`, `read`, `finish` or `other`."""
    paths: tuple[str, ...] = ()
    """File paths the call names (read or written), as the agent wrote them."""
    id: str | None = None
    """The call id that links it to its result, when the format has one."""

    def to_json(self) -> dict[str, Any]:
        """The contract's tool call object: name, kind, paths."""
        return {"name": self.name, "kind": self.kind, "paths": list(self.paths)}


@dataclass(frozen=True)
class FileEdit:
    """One change to one file made by a tool call."""

    path: str
    """The file, as the agent named it (often absolute)."""
    operation: EditOp
    """`create`, `write` (whole file), `replace`, `insert`, `patch`, `delete`, or `shell` (content unknown)."""
    old: str | None = None
    """The text replaced (`replace`), or the file before a whole-file write, when known."""
    new: str | None = None
    """The text written or inserted, when known."""
    patch: str | None = None
    """A unified-diff-style patch of the change (lines prefixed ` `, `+`, `-`), when known."""
    existed: bool | None = None
    """Whether the file existed before this edit (None when the transcript does not say)."""
    call_id: str | None = None
    """Id of the tool call that made the edit."""


@dataclass(frozen=True)
class Command:
    """One shell command a turn ran, with what its result said."""

    command: str
    """The command line as the agent wrote it."""
    exit: int | None = None
    """Its exit code, when the transcript records one (None when unknown)."""
    output_head: str | None = None
    """The first OUTPUT_HEAD_CHARS characters of its output (None when no result was recorded)."""
    call_id: str | None = None
    """Id of the tool call that ran it."""
    result_turn: int | None = None
    """Index of the turn holding its whole output (a test summary sits at the end, past `output_head`)."""

    def to_json(self) -> dict[str, Any]:
        """The contract's command object: command, exit, output_head."""
        return {"command": self.command, "exit": self.exit, "output_head": self.output_head}


OUTPUT_HEAD_CHARS = 2000
"""How much of a command's output the JSON contract carries."""


def edit_json(e: FileEdit) -> dict[str, Any]:
    """The contract's edit object: `{file, patch}` when the edit is a patch, else `{file, old, new}`."""
    if e.patch is not None:
        return {"file": e.path, "patch": e.patch}
    return {"file": e.path, "old": e.old, "new": e.new}


@dataclass(frozen=True)
class Turn:
    """One turn of the run: a message, a model response, or a tool result."""

    index: int
    """1-based position in the transcript."""
    role: Role
    """`user`, `assistant`, `tool` or `system`."""
    text: str
    """The visible text (the tool output for tool turns)."""
    reasoning: str = ""
    """The reasoning text the model produced, when it is recorded in clear."""
    reasoning_chars: int = 0
    """Size of the reasoning in characters (the declared size when the text is redacted)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls made by this turn."""
    edits: tuple[FileEdit, ...] = ()
    """File edits this turn's tool calls made (failed calls excluded)."""
    stop: Stop = "unknown"
    """Why generation stopped: `end`, `tool_use`, `max_tokens`, `context_window`, `error`, `unknown`."""
    usage: Usage = NO_USAGE
    """Token usage of the model call behind this turn (zeros when not a model call or not recorded)."""
    flags: tuple[str, ...] = ()
    """Names from FLAGS that apply to this turn, in FLAGS order."""
    files_written: tuple[str, ...] = ()
    """Paths this turn's edits wrote, in order, without repeats."""
    touch_paths: tuple[str, ...] = ()
    """Paths of `TOUCH: <path>` lines in this turn's text."""
    line: int | None = None
    """Where the turn starts in the source (line number, or event number for JSON documents)."""
    group: str | None = None
    """Id of the tool call (a Claude Code `Task`) whose subagent produced this turn; None for the main agent."""
    time: str | None = None
    """When the turn was typed or written, ISO 8601 (Aider: from `.aider.input.history`); None when the file has none."""
    commands: tuple[Command, ...] = ()
    """The shell commands this turn's tool calls ran, each with its exit code and output head when recorded."""
    kind: str | None = None
    """A finer kind than the role: `command-output` (a command the user ran, Aider `/run` `/test`), `answer` (the user's reply to the agent's question), None otherwise."""
    note: str | None = None
    """Why the turn reads as it does, when the loader knows something the text does not say (a reply cut off, not applied)."""

    @classmethod
    def from_parts(
        cls,
        index: int,
        role: str,
        text: str,
        reasoning: str,
        reasoning_chars: int,
        tool_calls: tuple[ToolCall, ...],
        edits: tuple[FileEdit, ...],
        stop: str,
        usage: Usage,
        flags: tuple[str, ...],
        files_written: tuple[str, ...],
        touch_paths: tuple[str, ...],
        line: int | None,
        group: str | None = None,
        time: str | None = None,
        commands: tuple[Command, ...] = (),
        kind: str | None = None,
        note: str | None = None,
    ) -> "Turn":
        """Build a Turn from every field, positionally; the same record the constructor makes.

        A frozen dataclass's `__init__` sets each field through
        `object.__setattr__`, which is a measurable share of loading a
        100 MB session; loaders build turns here instead. `role` and `stop`
        must already be values of Role and Stop (the caller guarantees it).
        """
        t = object.__new__(cls)
        d = t.__dict__
        d["index"] = index
        d["role"] = role
        d["text"] = text
        d["reasoning"] = reasoning
        d["reasoning_chars"] = reasoning_chars
        d["tool_calls"] = tool_calls
        d["edits"] = edits
        d["stop"] = stop
        d["usage"] = usage
        d["flags"] = flags
        d["files_written"] = files_written
        d["touch_paths"] = touch_paths
        d["line"] = line
        d["group"] = group
        d["time"] = time
        d["commands"] = commands
        d["kind"] = kind
        d["note"] = note
        return t

    def has(self, flag: str) -> bool:
        """True when `flag` is one of this turn's flags."""
        return flag in self.flags

    def to_json(self) -> dict[str, Any]:
        """The contract's turn object."""
        return {
            "index": self.index,
            "role": self.role,
            "text": self.text,
            "reasoning": self.reasoning,
            "reasoning_chars": self.reasoning_chars,
            "tool_calls": [c.to_json() for c in self.tool_calls],
            "files_written": list(self.files_written),
            "stop": self.stop,
            "usage": self.usage.to_json(),
            "flags": list(self.flags),
            "group": self.group,
            "time": self.time,
            "edits": [edit_json(e) for e in self.edits],
            "commands": [c.to_json() for c in self.commands],
            "kind": self.kind,
            "note": self.note,
        }


@dataclass(frozen=True)
class Transcript:
    """An agent's run as a sequence of turns."""

    format: str
    """One of names.FORMATS."""
    turns: tuple[Turn, ...]
    """The turns in order (turn `i` is at position `i - 1`)."""
    skipped_lines: int
    """Malformed lines (or event files) that were skipped."""
    source: str
    """The file or folder the transcript was read from."""
    cwd: str | None = None
    """The agent's working directory when the transcript records it."""
    notes: tuple[str, ...] = ()
    """Transcript-level remarks for the reviewer (where a damaged file broke off, which run was picked …)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON contract of `reviewui transcript FILE --format json`."""
        return {
            "format": self.format,
            "turns": [t.to_json() for t in self.turns],
            "skipped_lines": self.skipped_lines,
            "notes": list(self.notes),
        }

    def turn(self, index: int) -> Turn:
        """Return the turn with 1-based `index`; raises IndexError when out of range."""
        if index < 1 or index > len(self.turns):
            raise IndexError(f"no turn {index}")
        return self.turns[index - 1]

    def cumulative_input(self) -> list[int]:
        """Return the running total of input tokens after each turn (one entry per turn)."""
        out: list[int] = []
        total = 0
        for t in self.turns:
            total += t.usage.input
            out.append(total)
        return out

    def task_text(self) -> str | None:
        """Return the first user turn's text (the task), or None when there is none."""
        for t in self.turns:
            if t.role == "user" and t.text.strip():
                return t.text
        return None

    def last_claim(self) -> Turn | None:
        """Return the last turn flagged claims-done, or None."""
        for t in reversed(self.turns):
            if CLAIMS_DONE in t.flags:
                return t
        return None

    def touch_declared(self) -> list[str]:
        """Return every path declared with a `TOUCH: <path>` line, in order, without repeats."""
        seen: dict[str, None] = {}
        for t in self.turns:
            for p in t.touch_paths:
                seen.setdefault(p, None)
        return list(seen)

    def flagged(self, flag: str) -> list[Turn]:
        """Return the turns carrying `flag`, in order."""
        return [t for t in self.turns if flag in t.flags]
