"""The transcript view's filter and rows, as pure functions over its turns.

Which turns pass the filter (flagged only, one flag, a search) and the
filter in words; the rows the view draws (a turn's own line, its detail
lines when expanded, one line for a folded run of subagent turns) and
where a turn's row is. The view keeps the state and the caches, and draws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from reviewui.ui.transcript_detail import BAR, CLAIM_FLAGS

if TYPE_CHECKING:
    from reviewui.core.transcript import Turn

FOLD = -2
"""Detail number of the one row a folded run of subagent turns shows."""

Rows = list[tuple[int, int]]
"""(turn position in the shown turns, detail line number; -1 for the turn's own line, FOLD for a fold)."""


def turn_passes(flags: tuple[str, ...], flagged_only: bool, flag_filter: str | None, search: str,
                haystack: Callable[[], str]) -> bool:
    """True when a turn showing `flags` passes the filter (`haystack`: its searchable text, lower case)."""
    if flagged_only and not flags:
        return False
    if flag_filter and flag_filter not in flags:
        return False
    if search:
        return search.lower() in haystack()
    return True


def filter_words(shown: int, total: int, flagged_only: bool, flag_filter: str | None, search: str) -> str:
    """What the filter shows, in words: `3/12 turns (flagged, containing 'x')`."""
    parts = []
    if flagged_only:
        parts.append("flagged")
    if flag_filter:
        parts.append(flag_filter)
    if search:
        parts.append(f"containing {search!r}")
    words = f"{shown}/{total} turns"
    return f"{words} ({', '.join(parts)})" if parts else words


def next_flag(turns: Sequence[Turn], claim_flags: dict[int, tuple[str, ...]], current: str | None) -> str | None:
    """The flag `l` filters by after `current`: the turns' flags, then their claims', then none again."""
    from reviewui.core.transcript import FLAGS

    present = [f for f in FLAGS if any(f in t.flags for t in turns)]
    present += [f for f in CLAIM_FLAGS if any(f in c for c in claim_flags.values())]
    order: Sequence[str | None] = [None, *present]
    i = order.index(current) if current in order else 0
    return order[(i + 1) % len(order)]


def turn_rows(shown: Sequence[int], folds: dict[int, int], expanded: set[int],
              detail: Callable[[int], list[tuple[str, str]]], measure: bool) -> tuple[Rows, int]:
    """The rows of the shown turns (`folds`: folded runs by their first position), and, when `measure`,
    the widest detail line drawn (0 otherwise)."""
    rows: Rows = []
    widest = 0
    pos = 0
    while pos < len(shown):
        if pos in folds:
            rows.append((pos, FOLD))
            pos += folds[pos]
            continue
        ti = shown[pos]
        rows.append((pos, -1))
        if ti in expanded:
            visual = detail(ti)
            rows.extend((pos, k) for k in range(len(visual)))
            if measure:
                widest = max([widest, *(len(text) for _, text in visual)])
        pos += 1
    return rows, widest


def row_of(rows: Rows, shown: Sequence[int], folds: dict[int, int], ti: int, folded: bool = True) -> int | None:
    """The row of turn `ti`'s own line, or (`folded`) of the folded line it is inside; None when not shown."""
    for y, (pos, k) in enumerate(rows):
        if k == -1 and shown[pos] == ti:
            return y
        if k == FOLD and folded and ti in shown[pos:pos + folds[pos]]:
            return y
    return None


def header_width(t: Turn, flags: tuple[str, ...]) -> int:
    """How wide turn `t`'s own line may be drawn: an estimate that is never short (the fixed columns,
    the flags, the first line)."""
    first = t.text.strip().split("\n", 1)[0][:300] if t.text.strip() else ""
    return 6 + 9 + BAR + 19 + sum(len(f) + 3 for f in flags) + 1 + len(first) + 40 + (len(t.time) if t.time else 0)
