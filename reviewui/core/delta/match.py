"""Which hunk of the branch now is which hunk the reviewer judged: the pure matching of one file.

Two patches of one file are compared: the one judged (its base, the head
judged) and the one now (its base, the head now). A hunk now whose body (its
text less the `@@` line, whitespace and all: Python's indentation is code)
equals a judged hunk's body is `unchanged`, wherever its line numbers moved
(a rebase onto a moved base shifts them). A hunk now that covers lines a
judged hunk covered, once those lines are followed from the judged head to
the head now, is `changed`; one that covers none is `new`. A judged hunk
that no hunk now is or covers is `gone`.

"Covers" follows lines through the diff of the file between the two heads
(`LineMap`), so a hunk that only moved down because lines were added above
it is still found. Everything here is a pure function of parsed hunks: the
git work is compute.py's.
"""

from __future__ import annotations

import bisect
import difflib
from dataclasses import dataclass
from typing import Literal, Sequence

from reviewui.core.hunks import Hunk
from reviewui.core.state import hunk_digest

State = Literal["new", "changed", "unchanged", "gone"]
STATES: tuple[State, ...] = ("changed", "new", "unchanged", "gone")
"""Every state, in the order counts are said."""


@dataclass(frozen=True)
class Block:
    """One changed run of the diff between the two heads: old lines [a, a_end) became new lines [b, b_end)."""

    a: int
    a_end: int
    b: int
    b_end: int


class LineMap:
    """Where a line of the file at the judged head is in the file now (from the diff between the heads)."""

    def __init__(self, blocks: Sequence[Block] = ()) -> None:
        self.blocks = sorted(blocks, key=lambda b: (b.a, b.a_end))
        self._starts = [b.a for b in self.blocks]

    @classmethod
    def from_hunks(cls, hunks: Sequence[Hunk]) -> LineMap:
        """The map of a file's diff between the two heads (its hunks, any context size)."""
        blocks: list[Block] = []
        for h in hunks:
            old_no, new_no = h.old_start if h.old_len else h.old_start + 1, h.new_start if h.new_len else h.new_start + 1
            run: list[int] | None = None  # [a, a_end, b, b_end] of the changed run under way
            for ln in h.lines:
                if ln.kind == "context":
                    if run is not None:
                        blocks.append(Block(*run))
                        run = None
                    old_no, new_no = old_no + 1, new_no + 1
                    continue
                if run is None:
                    run = [old_no, old_no, new_no, new_no]
                if ln.kind == "removed":
                    old_no += 1
                    run[1] = old_no
                else:
                    new_no += 1
                    run[3] = new_no
            if run is not None:
                blocks.append(Block(*run))
        return cls(blocks)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The lines now, [lo, hi), that old lines [start, end) became (at least one line wide)."""
        lo = self._line(start)[0]
        hi = self._line(max(start, end - 1))[1]
        return lo, max(hi, lo + 1)

    def _line(self, n: int) -> tuple[int, int]:
        """Old line `n` now: [lo, hi), one line when it is unchanged, the whole changed run's lines otherwise."""
        offset = 0
        for b in self.blocks[: bisect.bisect_right(self._starts, n)]:
            if b.a <= n < b.a_end:
                return b.b, max(b.b_end, b.b + 1)
            if b.a_end <= n:
                offset += (b.b_end - b.b) - (b.a_end - b.a)
        return n + offset, n + offset + 1


@dataclass(frozen=True)
class FileMatch:
    """How the hunks of one file now relate to the hunks judged."""

    states: tuple[State, ...]
    """The state of each hunk now, by its index."""
    was: tuple[tuple[int, ...], ...]
    """For each hunk now, the judged hunks it is (unchanged) or covers (changed), by index."""
    gone: tuple[int, ...]
    """The judged hunks no hunk now is or covers."""


def _body(h: Hunk) -> str:
    return hunk_digest(h.text)


def _new_span(h: Hunk) -> tuple[int, int]:
    return h.new_start, h.new_start + max(h.new_len, 1)


def match_file(old: Sequence[Hunk], now: Sequence[Hunk], lines: LineMap,
               bodies: tuple[Sequence[str], Sequence[str]] | None = None) -> FileMatch:
    """Match the hunks now of one file to the judged ones (see the module docstring). `bodies` are the
    hunks' identities (judged, now) when the caller has exact ones (their bytes), else their text's."""
    moved = [lines.span(*_new_span(h)) for h in old]
    free = set(range(len(old)))
    states: list[State] = ["new"] * len(now)
    was: list[tuple[int, ...]] = [()] * len(now)
    old_bodies, now_bodies = bodies or ([_body(h) for h in old], [_body(h) for h in now])
    # Equal bodies first, each judged hunk used once, the nearest (after following the lines) first.
    for i, h in enumerate(now):
        body = now_bodies[i]
        same = [j for j in free if old_bodies[j] == body]
        if same:
            j = min(same, key=lambda k: (abs(moved[k][0] - h.new_start), k))
            free.discard(j)
            states[i], was[i] = "unchanged", (j,)
    for i, h in enumerate(now):
        if states[i] == "unchanged":
            continue
        lo, hi = _new_span(h)
        covered = tuple(sorted(j for j in free if moved[j][0] < hi and lo < moved[j][1]))
        if covered:
            states[i], was[i] = "changed", covered
    used = {j for i, js in enumerate(was) if states[i] != "new" for j in js}
    return FileMatch(tuple(states), tuple(was), tuple(j for j in range(len(old)) if j not in used))


def interdiff(old: Sequence[Hunk], now: Hunk) -> str:
    """What changed in a hunk since it was judged: a diff of the judged hunk(s)' text against its text now.

    Each line keeps its own `+`/`-`/` ` mark under the interdiff's, as a range-diff shows
    (`-+x = 1` was an added line at the verdict and is no longer).
    """
    before = [ln for h in old for ln in h.text.splitlines()[1:]]
    after = now.text.splitlines()[1:]
    headers = ", ".join(h.header for h in old)
    out = difflib.unified_diff(before, after, f"at the verdict ({headers})", f"now ({now.header})", n=2, lineterm="")
    return "\n".join(out)
