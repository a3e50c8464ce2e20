"""Mutable drafts the loaders fill in before flags.py freezes them into Turns.

A loader sees a turn in pieces (Claude Code writes one line per content
block; a tool's result arrives turns after its call and may say the edit
failed), so it builds `Draft`s, registers tool calls by id, and lets
`finalize` compute the flags once everything is known.
"""

from __future__ import annotations

from typing import Any, Hashable

from reviewui.core.transcript.model import FileEdit, ToolCall, Usage
from reviewui.core.transcript.normalize import text_size


_NO_FLAGS: frozenset[str] = frozenset()

SHAPE_ERRORS = (TypeError, AttributeError, KeyError, ValueError, IndexError)
"""What a record of an unexpected shape raises; such a record is skipped and counted, not fatal."""


class Draft:
    """One turn under construction."""

    __slots__ = (
        "role", "texts", "reasoning", "reasoning_size", "has_reasoning", "calls", "edits", "stop",
        "usage", "flags", "is_error", "exit_code", "prompt_key", "final", "line", "key", "last_uuid", "result_kind", "raw_usage",
        "group", "time", "result_of", "kind", "note", "notice",
    )

    def __init__(self, role: str, line: int | None = None, key: Any = None) -> None:
        self.role = role
        self.texts: list[str] = []
        self.reasoning: list[str] = []
        self.reasoning_size = 0
        self.has_reasoning = False
        self.calls: list[ToolCall] = []
        self.edits: list[FileEdit] = []
        self.stop: str | None = None
        self.usage: Usage | None = None
        self.flags: frozenset[str] = _NO_FLAGS  # shared until a flag is added: few drafts get one
        self.is_error = False
        self.exit_code: int | None = None
        self.prompt_key: Hashable | None = None
        self.final = False
        self.line = line
        self.key = key
        self.last_uuid: Any = None  # Claude Code: uuid of the response's latest line
        self.result_kind: str | None = None
        self.raw_usage: Any = None  # a provider usage object, normalized at finalize
        self.group: str | None = None  # the Task call whose subagent made this turn
        self.time: str | None = None  # when the turn was written or typed, ISO 8601
        self.result_of: str | None = None  # the id of the tool call whose result this turn holds
        self.kind: str | None = None  # a finer kind than the role (Turn.kind)
        self.note: str | None = None  # why the turn reads as it does (Turn.note)
        # A notice of the agent's harness (an API error, a retry), shown in its log but never sent to
        # the model: not a prompt, so its text says nothing about the prompt's prefix.
        self.notice = False

    def add_flag(self, flag: str) -> None:
        """Mark the turn with `flag` (a name from FLAGS) before any is computed."""
        self.flags = self.flags | {flag}

    def add_text(self, text: str | None) -> None:
        """Append visible text (ignores None and empty strings)."""
        if text:
            self.texts.append(text)

    def add_reasoning(self, text: str | None, present: bool = True) -> None:
        """Record reasoning; `present` marks reasoning that exists even when its text is hidden."""
        if text:
            self.reasoning.append(text)
            self.reasoning_size += text_size(text)
            self.has_reasoning = True
        elif present:
            self.has_reasoning = True


class Run:
    """The drafts of one transcript plus the registry linking tool calls to their turns."""

    def __init__(self) -> None:
        self.drafts: list[Draft] = []
        self.stamp: str | None = None  # the time of the record being read: each new draft takes it
        self.cwd: str | None = None
        self.notes: list[str] = []  # transcript-level remarks (a damaged file, the run picked)
        self.prompt_key: Hashable | None = None  # what the current system prompt and tool set hash to
        self._calls: dict[str, tuple[Draft, ToolCall]] = {}

    def new(self, role: str, line: int | None = None, key: Any = None) -> Draft:
        """Start a new draft turn at the end of the run and return it."""
        d = Draft(role, line, key)
        d.time = self.stamp
        self.drafts.append(d)
        return d

    def notice(self, text: str, line: int | None = None) -> Draft:
        """Add a system turn holding a notice of the agent's harness (an API error, a retry): never a prompt."""
        d = self.new("system", line)
        d.add_text(text)
        d.notice = True
        return d

    def take_drafts(self) -> list[Draft]:
        """Hand over the drafts and leave the run empty (no drafts, no calls): freezing spends it."""
        drafts, self.drafts, self._calls = self.drafts, [], {}
        return drafts

    @property
    def last(self) -> Draft | None:
        """The most recent draft, or None."""
        return self.drafts[-1] if self.drafts else None

    def add_call(self, draft: Draft, call: ToolCall, edits: list[FileEdit]) -> None:
        """Attach a tool call and its edits to `draft`, remembering it by id."""
        draft.calls.append(call)
        draft.edits.extend(edits)
        if call.id:
            self._calls[call.id] = (draft, call)

    def call(self, call_id: Any) -> tuple[Draft, ToolCall] | None:
        """Return the draft and call registered under `call_id`, or None."""
        if not isinstance(call_id, str):
            return None
        return self._calls.get(call_id)

    def result(self, draft: Draft, call_id: Any) -> tuple[Draft, ToolCall] | None:
        """Mark `draft` as holding the result of call `call_id`; return that call's draft and call."""
        found = self._calls.get(call_id) if type(call_id) is str else None
        if found is not None and draft.result_kind is None:
            draft.result_kind = found[1].kind
            draft.result_of = found[1].id
        return found

    def call_failed(self, call_id: Any) -> None:
        """Drop the edits of a call whose result says it failed (the file was not changed)."""
        found = self.call(call_id)
        if found is not None:
            draft = found[0]
            draft.edits = [e for e in draft.edits if e.call_id != call_id]

    def replace_edits(self, call_id: Any, edits: list[FileEdit]) -> None:
        """Swap the edits of call `call_id` for better-informed ones (e.g. from its result)."""
        found = self.call(call_id)
        if found is None:
            return
        draft = found[0]
        out: list[FileEdit] = []
        placed = False
        for e in draft.edits:
            if e.call_id != call_id:
                out.append(e)
            elif not placed:
                out.extend(edits)
                placed = True
        if not placed:
            out.extend(edits)
        draft.edits = out

    def edits_of(self, call_id: Any) -> list[FileEdit]:
        """Return the edits currently attached to call `call_id`."""
        found = self.call(call_id)
        if found is None:
            return []
        return [e for e in found[0].edits if e.call_id == call_id]
