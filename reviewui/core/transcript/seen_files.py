"""What a transcript has shown so far, turn by turn: the files the agent created, read and edited
(which of them are tests, which test lines existed before the run), and what its test runs said.
The flags (flags.py) read both in one pass over the turns."""

from __future__ import annotations

from typing import Callable, Iterable

from reviewui.core.roles import is_test_path
from reviewui.core.transcript.builder import Draft
from reviewui.core.transcript.model import FileEdit
from reviewui.core.transcript.patches import changed_lines, modifies_existing_lines
from reviewui.core.transcript.signals import read_verdict

BaseFile = Callable[[str], "str | None"]
"""Reads a repo-relative path at the base commit (None when the file is not there)."""

_NO_LINES: tuple[list[str], list[str]] = ([], [])


class SeenFiles:
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


class Verdicts:
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
