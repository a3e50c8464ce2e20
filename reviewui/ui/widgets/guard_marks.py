"""Guard reverts on screen: gutter marks, results-panel lines, badges, matrix rows and jumps.

Plain functions over bite results (HunkResult with `.guards`), so the review
screen only wires them in: the diff view draws the marks, the results panel
the lines, the matrix the rows. Every string from the repo is drawn as
literal Content (never parsed as markup) with control characters made visible.
"""

from __future__ import annotations

from typing import Any, Iterable

from textual.content import Content

# Said in the core (the verdict dialog's words too), drawn here.
from reviewui.core.bite.verdict_words import GUARD_ORDER, NAME_ONLY_REASON as NAME_ONLY_REASON
from reviewui.core.bite.verdict_words import guard_headline as headline, only_a_missing_name as only_a_missing_name
from reviewui.core.safe_text import visible
from reviewui.ui.tones import TONE_STYLE
from reviewui.ui.widgets.diff_paint import Badge

MARKS: dict[str, tuple[str, str]] = {
    "bites": ("●", "good"),
    "toothless": ("○", "bad"),
    "broken": ("✗", "warn"),
    "timeout": ("✗", "warn"),
    "error": ("✗", "bad"),
    "uncovered": ("·", "warn"),
}
"""Verdict -> (gutter character, tone)."""

# When one line has several guards, the mark shows the one a reviewer must see first.
_PRIORITY = GUARD_ORDER


def likely_equivalent(g: Any) -> bool:
    """A toothless guard whose witness search found nothing in its tries: shown dimmer, never a bite."""
    w = getattr(g, "witness", None)
    return g.verdict == "toothless" and w is not None and w.searched and not w.found


def mark(g: Any) -> tuple[str, str]:
    """(gutter character, tone) of one guard result (a likely equivalent one dimmed)."""
    found = MARKS.get(g.verdict, ("?", "info"))
    return (found[0], "info") if likely_equivalent(g) else found


def line_marks(results: Iterable[Any], path: str) -> dict[int, tuple[str, str]]:
    """Branch-side line -> (mark, tone) for the checked guards of file `path`."""
    by_line: dict[int, list[Any]] = {}
    for r in results:
        for g in getattr(r, "guards", ()) or ():
            if g.file == path and g.verdict in MARKS:
                by_line.setdefault(g.line, []).append(g)
    # The guard a reviewer must see first; a toothless one with a witness before a likely equivalent one.
    return {line: mark(min(gs, key=lambda g: (_PRIORITY.index(g.verdict), likely_equivalent(g))))
            for line, gs in by_line.items()}


def guard_lines(result: Any) -> list[Content]:
    """The guards of one hunk's result, one line each: `line 57: … — every test still passes`."""
    guards = getattr(result, "guards", ()) or ()
    if not guards:
        return []
    out = [Content.assemble(("guards", "bold"), f"  {summary(guards)}")]
    for g in guards:
        char, tone = mark(g)
        text = visible(g.one_line())
        out.append(Content.assemble((f"  {char} ", TONE_STYLE[tone]),
                                    (text, TONE_STYLE["info"]) if likely_equivalent(g) else text))
    return out


def summary(guards: Iterable[Any]) -> str:
    """`8 bite, 1 toothless` for a set of guard results."""
    counts: dict[str, int] = {}
    for g in guards:
        counts[g.verdict] = counts.get(g.verdict, 0) + 1
    words = {"bites": "bite"}
    return ", ".join(f"{counts[v]} {words.get(v, v)}" for v in _PRIORITY[::-1] if counts.get(v))


def headline_tone(guards: Iterable[Any]) -> str:
    """The tone of a guard headline: bad with a toothless guard, good when every guard bites, else warn."""
    verdicts = [g.verdict for g in guards]
    if "toothless" in verdicts:
        return "bad"
    return "good" if verdicts and all(v == "bites" for v in verdicts) else "warn"


def hunk_badge(result: Any) -> Badge | None:
    """The badge for a hunk whose whole revert only removes a name: its guards' verdicts instead."""
    if not only_a_missing_name(result):
        return None
    return Badge(headline(result.guards), headline_tone(result.guards))


def toothless_positions(results: Iterable[Any], order: list[str]) -> list[tuple[str, int]]:
    """(file, line) of every toothless guard, in file-list order then line order."""
    rank = {p: n for n, p in enumerate(order)}
    found = {(g.file, g.line) for r in results for g in (getattr(r, "guards", ()) or ()) if g.verdict == "toothless"}
    return sorted(found, key=lambda fl: (rank.get(fl[0], len(rank)), fl[0], fl[1]))


def step(positions: list[tuple[str, int]], here: tuple[str, int], direction: int,
         order: list[str]) -> tuple[str, int] | None:
    """The next (1) or previous (-1) position after `here`, None past the end."""
    rank = {p: n for n, p in enumerate(order)}

    def key(fl: tuple[str, int]) -> tuple[int, str, int]:
        return (rank.get(fl[0], len(rank)), fl[0], fl[1])

    if direction > 0:
        after = [p for p in positions if key(p) > key(here)]
        return after[0] if after else None
    before = [p for p in positions if key(p) < key(here)]
    return before[-1] if before else None


