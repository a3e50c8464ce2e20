"""The since-verdict view's records: each hunk of the branch now with its state since the verdict.

`Delta` is what compute.py returns and what `reviewui delta`, the review
screen and the queue read: the hunks of the diff now, in diff order, each
`new`, `changed` or `unchanged` since the head the reviewer judged, then the
judged hunks that are `gone`. A file with no text hunks (binary, over the
analysis cap, a mode change, an empty file) is one entry of its own, its
header saying which (`FILE_HEADERS`), judged by its blob and mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from reviewui.core.delta.match import STATES, State

FILE_HEADERS = ("(binary)", "(not shown: over the cap)", "(mode)", "(no text change)")
"""The header of a file's one entry when it has no text hunks."""


@dataclass(frozen=True)
class HunkDelta:
    """One hunk now (or one judged hunk that is gone) and its state since the verdict."""

    file: str
    """The file's path now (for a gone hunk: its path at the verdict)."""
    header: str
    """The hunk's `@@` header now (gone: at the verdict), or one of FILE_HEADERS for a file without hunks."""
    state: State
    """`new`, `changed`, `unchanged` or `gone`."""
    index: int | None
    """The hunk's index in its file now (Hunk.index); None for a gone hunk or a file's own entry."""
    was: tuple[tuple[str, str], ...] = ()
    """(file, header) of the judged hunk(s) it is (unchanged) or changes (changed)."""
    interdiff: str = ""
    """For a changed hunk: its judged text against its text now (match.interdiff); else ""."""
    digest: str = ""
    """The hunk's text digest as a reviewed mark keeps it (state.hunk_digest); "" for a gone hunk or a file's entry."""

    @property
    def key(self) -> tuple[str, int] | None:
        """(file, index) as the rest of reviewui names a hunk; None for a gone hunk or a file's own entry."""
        return None if self.index is None else (self.file, self.index)


@dataclass(frozen=True)
class Delta:
    """What changed on a branch since a head the reviewer judged."""

    since: str
    """The head judged (the verdict's, or `--since`)."""
    since_base: str
    """The base the judged patch was taken from."""
    head: str
    """The head now."""
    base: str
    """The base now."""
    hunks: tuple[HunkDelta, ...]
    """Every hunk now in diff order (files without hunks as one entry each), then the gone ones."""
    renamed: Mapping[str, str] = field(default_factory=dict)
    """Path at the judged head -> path now, for files renamed between the two heads."""

    def counts(self) -> dict[str, int]:
        """How many entries are in each state (every state present)."""
        counts: dict[str, int] = dict.fromkeys(STATES, 0)
        for h in self.hunks:
            counts[h.state] += 1
        return counts

    def state_of(self, path: str, index: int) -> State | None:
        """The state of hunk `index` of `path` now, or None when the delta does not know it."""
        return self._by_key().get((path, index))

    def entry(self, path: str, index: int) -> HunkDelta | None:
        """The entry of hunk `index` of `path` now, or None."""
        return next((h for h in self.hunks if h.file == path and h.index == index), None)

    def files_with(self, states: tuple[State, ...] = ("changed", "new")) -> list[str]:
        """The paths now with at least one entry in one of `states`, in diff order."""
        return list(dict.fromkeys(h.file for h in self.hunks if h.state in states and h.state != "gone"))

    def words(self) -> str:
        """`2 hunks changed, 1 new, 14 unchanged` (and `, 3 gone` when some are)."""
        c = self.counts()
        text = f"{c['changed']} hunk{'s' if c['changed'] != 1 else ''} changed, {c['new']} new, {c['unchanged']} unchanged"
        return text + (f", {c['gone']} gone" if c["gone"] else "")

    def _by_key(self) -> dict[tuple[str, int], State]:
        return {k: h.state for h in self.hunks if (k := h.key) is not None}
