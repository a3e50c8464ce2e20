"""Turning drafts into Turns: the flags that make a turn worth a reviewer's look.

Each flag is a fact read off the transcript, never a judgement of the code:
the turn stopped at the token limit; its reasoning went back into later
requests; it edited lines of a test that existed before, right after a test
run came back red; it claimed to be done; its prompt prefix changed or the
provider's cache stopped hitting. Everything is computed in one pass over the
drafts, in order, because several flags depend on what came before.
"""

from __future__ import annotations

import re
from typing import Hashable, Iterable

from reviewui.core.roles import DEFAULT_TEST_GLOBS
from reviewui.core.transcript.builder import Draft, Run
from reviewui.core.transcript.commands import link_commands
from reviewui.core.transcript.model import (
    CACHE_MISS,
    CLAIMS_DONE,
    EDITS_EXISTING_TEST,
    EDITS_TEST_AFTER_FAILURE,
    FLAGS,
    NO_USAGE,
    PROMPT_CHANGED,
    REASONING_ONLY,
    REASONING_RESENT,
    TOOL_ERROR,
    TOUCH_DECLARED,
    TRUNCATED,
    WRITES_TESTS,
    FileEdit,
    ToolCall,
    Transcript,
    Turn,
    Usage,
)
from reviewui.core.transcript.normalize import usage_from
from reviewui.core.transcript.seen_files import BaseFile, SeenFiles, Verdicts
from reviewui.core.transcript.signals import claims_done_text, prose, read_verdict, touch_paths

__all__ = ["BaseFile", "claims_done_text", "finalize", "prose", "read_verdict", "touch_paths"]


_FINAL_BY_SHAPE = {"claude-code", "openai", "anthropic", "inspect-ai", "gemini-cli", "copilot-cli", "cline", "opencode",
                   "copilot-chat"}
"""Formats with no explicit "done" record, where a text-only reply that hands control back is the final answer."""

_BIT: dict[str, int] = {name: 1 << i for i, name in enumerate(FLAGS)}
_NAMES: dict[int, tuple[str, ...]] = {}
_TRUNCATED, _REASONING_ONLY, _REASONING_RESENT = _BIT[TRUNCATED], _BIT[REASONING_ONLY], _BIT[REASONING_RESENT]
_WRITES_TESTS, _EDITS_EXISTING_TEST = _BIT[WRITES_TESTS], _BIT[EDITS_EXISTING_TEST]
_EDITS_TEST_AFTER_FAILURE, _CLAIMS_DONE = _BIT[EDITS_TEST_AFTER_FAILURE], _BIT[CLAIMS_DONE]
_CACHE_MISS, _PROMPT_CHANGED, _TOOL_ERROR = _BIT[CACHE_MISS], _BIT[PROMPT_CHANGED], _BIT[TOOL_ERROR]
_TOUCH_DECLARED = _BIT[TOUCH_DECLARED]


def _mask(names: Iterable[str]) -> int:
    bits = 0
    for n in names:
        bits |= _BIT[n]
    return bits


def _flag_names(bits: int) -> tuple[str, ...]:
    """The flag names of a bit set, in FLAGS order (cached: few combinations occur)."""
    names = _NAMES.get(bits)
    if names is None:
        names = _NAMES[bits] = tuple(n for n in FLAGS if bits & _BIT[n])
    return names


def _cache_dropped(prev: Usage, cur: Usage) -> bool:
    if prev.cached <= 0 or prev.input <= 0 or cur.input <= 0:
        return False
    if cur.input < prev.input // 2:
        return False  # the context was reset (compaction, new session): a miss is expected
    share_drop = prev.cached / prev.input - cur.cached / cur.input
    return cur.cached < prev.cached * 0.8 and share_drop >= 0.2


_DIGITS = re.compile(r"\d+")


def _volatile_head(text: str) -> tuple[str, str] | None:
    """(first line, first line with numbers masked) when the prompt starts with a line carrying numbers."""
    first = text.lstrip().split("\n", 1)[0][:300]
    if not first or not _DIGITS.search(first):
        return None
    return first, _DIGITS.sub("#", first)


def _touches_files(calls: list[ToolCall]) -> bool:
    """True when a call reads or writes a file (not only shell or other calls)."""
    for c in calls:  # a loop, not any(<generator>): called for every turn with calls
        if c.kind != "shell" and c.kind != "other":
            return True
    return False


def _never_cached(prev: Usage, cur: Usage) -> bool:
    # The prefix was sent again (input grew) and none of it came from the cache.
    return cur.cached == 0 and prev.input >= 1024 and cur.input >= prev.input


def _claims_done(d: Draft, text: str, blank: bool, stop: str, next_role: str | None, by_shape: bool) -> bool:
    if stop == "max_tokens" or stop == "context_window" or stop == "error":
        return False
    if d.final:
        return True
    for c in d.calls:
        if c.kind == "finish":
            return True
    if blank:
        return False
    if claims_done_text(text):
        return True
    # A final answer: text and no tool call, and the agent hands control back.
    return by_shape and not d.calls and (next_role is None or next_role == "user")


def _ahead(drafts: list[Draft]) -> tuple[list[bool], list[str | None]]:
    """For each draft: whether an assistant turn comes after it, and the role of the next turn that
    is no system turn (None at the end)."""
    n = len(drafts)
    later_assistant = [False] * n
    next_role: list[str | None] = [None] * n
    seen_assistant = False
    nxt: str | None = None
    for i in range(n - 1, -1, -1):
        later_assistant[i] = seen_assistant
        next_role[i] = nxt
        role = drafts[i].role
        if role == "assistant":
            seen_assistant = True
        if role != "system":
            nxt = role
    return later_assistant, next_role


class _Flagger:
    """What the flags carry from one turn to the next, over one transcript in order: the files seen,
    the test runs' verdicts, the last usage, prompt key and prompt head."""

    def __init__(self, fmt: str, files: SeenFiles) -> None:
        self.fmt = fmt
        self.by_shape = fmt in _FINAL_BY_SHAPE
        self.files = files
        self.verdicts = Verdicts()
        self.prev_usage: Usage | None = None
        self.prev_key: Hashable | None = None
        self.prev_head: tuple[str, str] | None = None
        self.volatile_prefix = False

    def tool(self, d: Draft, text: str) -> int:
        """A tool turn's flags; its output is kept for the verdict of its test run, if it shows one."""
        kind = d.result_kind
        if kind is None or kind == "shell" or kind == "other":
            self.verdicts.outputs.append(text)
        return _TOOL_ERROR if d.is_error or (d.exit_code is not None and d.exit_code != 0) else 0

    def prompt(self, d: Draft, text: str) -> int:
        """A user or system turn's flags: per-turn metadata at the top of the prompt (`turn=7 ts=…`)
        changes the prefix every turn, so no provider can serve it from cache."""
        if not text or self.fmt == "aider" or d.notice:  # Aider's session headers, harness notices: not prompts
            return 0
        head = _volatile_head(text)
        if head is None:
            return 0
        prev, self.prev_head = self.prev_head, head
        if prev is not None and head[1] == prev[1] and head[0] != prev[0]:
            self.volatile_prefix = True
            return _PROMPT_CHANGED
        return 0

    def assistant(self, d: Draft, text: str, blank: bool, stop: str, usage: Usage | None, later_assistant: bool,
                  next_role: str | None) -> int:
        """An assistant turn's flags (its files' aside: `files`)."""
        bits = 0
        calls = d.calls
        if stop == "max_tokens" or stop == "context_window":
            bits |= _TRUNCATED
        if d.has_reasoning:
            if not calls and blank:
                bits |= _REASONING_ONLY
            if (calls or bits & _TRUNCATED) and later_assistant:
                bits |= _REASONING_RESENT
        if _claims_done(d, text, blank, stop, next_role, self.by_shape):
            bits |= _CLAIMS_DONE
        if usage is not None and usage.input > 0 and d.group is None:  # a subagent's calls have their own cache
            prev = self.prev_usage
            if prev is not None and (_cache_dropped(prev, usage) or (self.volatile_prefix and _never_cached(prev, usage))):
                bits |= _CACHE_MISS
            self.prev_usage = usage
        key = d.prompt_key
        if key is not None:
            if self.prev_key is not None and key != self.prev_key:
                bits |= _PROMPT_CHANGED
            self.prev_key = key
        return bits

    def files_touched(self, d: Draft) -> int:
        """The flags of a turn that edits files or calls a tool on them: tests written, an existing
        test's lines edited (after a red test run)."""
        if not d.edits and not (d.calls and _touches_files(d.calls)):
            return 0
        writes, modifies = self.files.observe(d)
        bits = _WRITES_TESTS if writes else 0
        if modifies:
            bits |= _EDITS_EXISTING_TEST
            if self.verdicts.latest() == "fail":
                bits |= _EDITS_TEST_AFTER_FAILURE
        return bits


def _written(edits: list[FileEdit]) -> tuple[str, ...]:
    """The paths a turn's edits wrote, each once, in order."""
    if not edits:
        return ()
    if len(edits) == 1:
        return (edits[0].path,)
    return tuple(dict.fromkeys(e.path for e in edits))


def finalize(
    run: Run,
    fmt: str,
    source: str,
    skipped: int,
    test_globs: Iterable[str] = DEFAULT_TEST_GLOBS,
    base_file: BaseFile | None = None,
) -> Transcript:
    """Freeze the run's drafts into a Transcript, computing every turn's flags (the run is left empty).

    `base_file` reads a file at the base commit; with it, `edits-existing-test`
    counts only lines the base has (without it, lines the run itself wrote earlier
    do not count).
    """
    later_assistant, next_role = _ahead(run.drafts)
    flagger = _Flagger(fmt, SeenFiles(run.cwd, test_globs, base_file))
    make = Turn.from_parts
    commands = link_commands(run.drafts)
    turns: list[Turn] = []
    append = turns.append
    # Each draft is let go as soon as it is frozen, so the turns reuse the memory the drafts
    # held instead of fresh pages: a 100 MB session's drafts are ~10 MB, and faulting in
    # new pages is a tenth of the headless command's time.
    queue = run.take_drafts()
    queue.reverse()
    for i in range(len(queue)):
        d = queue.pop()
        texts = d.texts
        text = (texts[0] if len(texts) == 1 else "\n".join(texts)) if texts else ""
        role = d.role
        bits = _mask(d.flags) if d.flags else 0
        reasoning = ("\n".join(d.reasoning) if len(d.reasoning) > 1 else d.reasoning[0]) if d.reasoning else ""
        if role != "assistant" and not d.calls and not d.edits:
            # User, system and tool turns: a short path (they are half of a long session).
            bits |= flagger.tool(d, text) if role == "tool" else flagger.prompt(d, text)
            append(make(i + 1, role, text, reasoning, d.reasoning_size, (), (), d.stop or "unknown", NO_USAGE,
                        _flag_names(bits) if bits else (), (), (), d.line, d.group, d.time, (), d.kind, d.note))
            continue
        usage = d.usage
        if usage is None and d.raw_usage is not None:
            usage = usage_from(d.raw_usage)
        blank = not text or text.isspace()
        stop = d.stop
        if stop is None:
            stop = "unknown" if role != "assistant" else "tool_use" if d.calls else "unknown" if blank else "end"
        touch: list[str] = []
        if role == "assistant":
            bits |= flagger.assistant(d, text, blank, stop, usage, later_assistant[i], next_role[i])
            if "TOUCH:" in text:
                touch = touch_paths(text)
                if touch:
                    bits |= _TOUCH_DECLARED
        elif role == "tool":
            bits |= flagger.tool(d, text)
        bits |= flagger.files_touched(d)
        append(make(i + 1, role, text, reasoning, d.reasoning_size, tuple(d.calls), tuple(d.edits), stop,
                    usage or NO_USAGE, _flag_names(bits) if bits else (), _written(d.edits),
                    tuple(touch) if touch else (), d.line, d.group, d.time, commands.get(i, ()), d.kind, d.note))
    return Transcript(fmt, tuple(turns), skipped, source, run.cwd, tuple(run.notes))
