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
from typing import Callable, Hashable, Iterable

from reviewui.core.roles import DEFAULT_TEST_GLOBS, is_test_path
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
from reviewui.core.transcript.patches import changed_lines, modifies_existing_lines
from reviewui.core.transcript.signals import claims_done_text, prose, read_verdict, touch_paths

__all__ = ["BaseFile", "claims_done_text", "finalize", "prose", "read_verdict", "touch_paths"]

BaseFile = Callable[[str], "str | None"]
"""Reads a repo-relative path at the base commit (None when the file is not there)."""

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


_NO_LINES: tuple[list[str], list[str]] = ([], [])


class _Files:
    """What the run has shown about files: which it created, which existed before it."""

    def __init__(self, cwd: str | None, test_globs: Iterable[str], base_file: BaseFile | None = None) -> None:
        self.cwd = cwd.rstrip("/") + "/" if cwd else None
        self.globs = tuple(test_globs)
        self.created: set[str] = set()
        self.existing: set[str] = set()
        self._test_cache: dict[str, bool] = {}
        self.base_file = base_file
        self._base: dict[str, frozenset[str] | None] = {}
        self.added: dict[str, set[str]] = {}  # file → lines this run put into it
        self.inserted: dict[str, list[str]] = {}  # file → text blocks this run put into it

    def base_lines(self, key: str) -> frozenset[str] | None:
        """The stripped lines of `key` at the base commit; empty when the file is not there; None when unknown."""
        if self.base_file is None or key.startswith(("/", "../", "~")):
            return None  # no base, or a path outside the repo the agent worked in: cannot tell
        if key not in self._base:
            text = self.base_file(key)
            self._base[key] = frozenset(s for s in (ln.strip() for ln in text.splitlines()) if s) if text is not None else frozenset()
        return self._base[key]

    def _modifies_existing(self, k: str, e: FileEdit, lines: tuple[list[str], list[str]]) -> bool | None:
        """Whether edit `e` of test `k` changes lines that were there before the run (None: cannot tell).

        `lines` is `changed_lines(e)`.
        """
        m = modifies_existing_lines(e, lines[1])
        if not m or e.operation in ("delete", "shell"):
            return m
        removed = {s for s in (ln.strip() for ln in lines[1]) if s}
        base = self.base_lines(k)
        if base is not None:
            return any(r in base for r in removed)  # only lines the base commit has are "existing"
        old = (e.old or "").strip()
        if old and any(old in block for block in self.inserted.get(k, ())):
            return False  # the text replaced lies inside text this run inserted earlier: its own lines
        ours = self.added.get(k)
        if ours and removed and removed <= ours and all(len(r) >= 8 for r in removed):
            return False  # every line taken out is a distinctive line the run wrote itself
        return m

    def norm(self, path: str) -> str:
        """The path relative to the agent's cwd when it is under it, without a leading `./`."""
        if self.cwd and path.startswith(self.cwd):
            path = path[len(self.cwd) :]
        while path.startswith("./"):
            path = path[2:]
        return path

    def is_test(self, key: str) -> bool:
        """True when the (normalized) path is a test under the run's test globs."""
        hit = self._test_cache.get(key)
        if hit is None:
            hit = self._test_cache[key] = is_test_path(key, self.globs)
        return hit

    def observe(self, d: Draft) -> tuple[bool, bool]:
        """Update the file knowledge with turn `d`; return (writes tests, modifies an existing test)."""
        writes = modifies = False
        for c in d.calls:
            if c.kind == "read":
                for p in c.paths:
                    k = self.norm(p)
                    if k not in self.created:
                        self.existing.add(k)
            elif c.kind in ("edit", "write") and any(self.is_test(self.norm(p)) for p in c.paths):
                writes = True
        for e in d.edits:
            k = self.norm(e.path)
            test = self.is_test(k)
            writes = writes or test
            if e.operation == "create" or (e.operation == "write" and e.existed is False):
                self.created.add(k)
                continue
            if e.operation == "write" and e.existed is None and k not in self.existing:
                self.created.add(k)  # a whole-file write to a file never seen before: a new file
                continue
            before = k not in self.created
            # A test's changed lines are read up to three times below: worked out once.
            lines = changed_lines(e) if test else _NO_LINES
            if test and before:
                m = self._modifies_existing(k, e, lines)
                if m is None:
                    m = e.existed is True or k in self.existing
                modifies = modifies or m
            if test:
                self.added.setdefault(k, set()).update(s for s in (ln.strip() for ln in lines[0]) if s)
                if e.new:
                    self.inserted.setdefault(k, []).append(e.new)
            if e.operation == "delete":
                self.created.discard(k)
            elif before:
                self.existing.add(k)
        return writes, modifies


class _Verdicts:
    """The test verdicts of tool outputs so far, read lazily.

    Only an edit to an existing test asks what the latest test run said, so
    outputs are scanned (newest first) only then, and each at most once.
    """

    def __init__(self) -> None:
        self.outputs: list[str] = []
        self._scanned = 0
        self._latest: str | None = None

    def latest(self) -> str | None:
        """The verdict of the most recent output that shows a test run, or None."""
        for j in range(len(self.outputs) - 1, self._scanned - 1, -1):
            v = read_verdict(self.outputs[j])
            if v is not None:
                self._latest = v
                break
        self._scanned = len(self.outputs)
        return self._latest


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
    drafts = run.drafts
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

    files = _Files(run.cwd, test_globs, base_file)
    verdicts = _Verdicts()
    by_shape = fmt in _FINAL_BY_SHAPE
    prev_usage: Usage | None = None
    prev_key: Hashable | None = None
    prev_head: tuple[str, str] | None = None
    volatile_prefix = False
    make = Turn.from_parts
    commands = link_commands(drafts)
    turns: list[Turn] = []
    append = turns.append
    # Each draft is let go as soon as it is frozen, so the turns reuse the memory the drafts
    # held instead of fresh pages: a 100 MB session's drafts are ~10 MB, and faulting in
    # new pages is a tenth of the headless command's time.
    queue = run.take_drafts()
    queue.reverse()
    del drafts
    for i in range(n):
        d = queue.pop()
        texts = d.texts
        text = (texts[0] if len(texts) == 1 else "\n".join(texts)) if texts else ""
        role = d.role
        calls = d.calls
        edits = d.edits
        bits = _mask(d.flags) if d.flags else 0
        reasoning = ("\n".join(d.reasoning) if len(d.reasoning) > 1 else d.reasoning[0]) if d.reasoning else ""
        if role != "assistant" and not calls and not edits:
            # User, system and tool turns: a short path (they are half of a long session).
            if role == "tool":
                if d.is_error or (d.exit_code is not None and d.exit_code != 0):
                    bits |= _TOOL_ERROR
                kind = d.result_kind
                if kind is None or kind == "shell" or kind == "other":
                    verdicts.outputs.append(text)
            elif text and fmt != "aider" and not d.notice:  # Aider's session headers, harness notices: not prompts
                # Per-turn metadata at the top of the prompt (`turn=7 ts=…`): the prefix
                # changes every turn, so no provider can serve it from cache.
                head = _volatile_head(text)
                if head is not None:
                    if prev_head is not None and head[1] == prev_head[1] and head[0] != prev_head[0]:
                        bits |= _PROMPT_CHANGED
                        volatile_prefix = True
                    prev_head = head
            append(
                make(
                    i + 1, role, text, reasoning, d.reasoning_size, (), (), d.stop or "unknown",
                    NO_USAGE, _flag_names(bits) if bits else (), (), (), d.line, d.group, d.time,
                    (), d.kind, d.note,
                )
            )
            continue
        usage = d.usage
        if usage is None and d.raw_usage is not None:
            usage = usage_from(d.raw_usage)
        stop = d.stop
        blank = not text or text.isspace()
        if stop is None:
            stop = "unknown" if role != "assistant" else "tool_use" if calls else "unknown" if blank else "end"
        touch: list[str] = []
        if role == "assistant":
            if stop == "max_tokens" or stop == "context_window":
                bits |= _TRUNCATED
            if d.has_reasoning:
                if not calls and blank:
                    bits |= _REASONING_ONLY
                if (calls or bits & _TRUNCATED) and later_assistant[i]:
                    bits |= _REASONING_RESENT
            if _claims_done(d, text, blank, stop, next_role[i], by_shape):
                bits |= _CLAIMS_DONE
            if usage is not None and usage.input > 0 and d.group is None:  # a subagent's calls have their own cache
                if prev_usage is not None and (
                    _cache_dropped(prev_usage, usage) or (volatile_prefix and _never_cached(prev_usage, usage))
                ):
                    bits |= _CACHE_MISS
                prev_usage = usage
            key = d.prompt_key
            if key is not None:
                if prev_key is not None and key != prev_key:
                    bits |= _PROMPT_CHANGED
                prev_key = key
            if "TOUCH:" in text:
                touch = touch_paths(text)
                if touch:
                    bits |= _TOUCH_DECLARED
        elif role == "tool":
            if d.is_error or (d.exit_code is not None and d.exit_code != 0):
                bits |= _TOOL_ERROR
            if d.result_kind in (None, "shell", "other"):
                verdicts.outputs.append(text)
        if edits or (calls and _touches_files(calls)):
            writes, modifies = files.observe(d)
            if writes:
                bits |= _WRITES_TESTS
            if modifies:
                bits |= _EDITS_EXISTING_TEST
                if verdicts.latest() == "fail":
                    bits |= _EDITS_TEST_AFTER_FAILURE
        if not edits:
            written: tuple[str, ...] = ()
        elif len(edits) == 1:
            written = (edits[0].path,)
        else:
            written = tuple(dict.fromkeys(e.path for e in edits))
        append(
            make(
                i + 1,
                role,
                text,
                reasoning,
                d.reasoning_size,
                tuple(calls),
                tuple(edits),
                stop,
                usage or NO_USAGE,
                _flag_names(bits) if bits else (),
                written,
                tuple(touch) if touch else (),
                d.line,
                d.group,
                d.time,
                commands.get(i, ()),
                d.kind,
                d.note,
            )
        )
    return Transcript(fmt, tuple(turns), skipped, source, run.cwd, tuple(run.notes))
