"""A hunk's or its guards' bite verdicts in a reviewer's words (`6 guards bite, 1 toothless`).

Apart from the guard results themselves (guard_report.py): the review screen draws these
words from its first paint on, and needs none of the results' dataclasses for that.
"""

from __future__ import annotations

from typing import Iterable, Protocol, Sequence


GUARD_ORDER: tuple[str, ...] = ("toothless", "uncovered", "error", "broken", "timeout", "bites")
"""Guard verdicts in the order a reviewer must see them (the first one of a line is its mark)."""

NAME_ONLY_REASON = "the revert only removes a name"
"""Why a hunk whose revert fails every test on import is said by its guards, not as `broken`."""


class _Graded(Protocol):
    @property
    def verdict(self) -> str: ...


class _Judged(Protocol):
    @property
    def verdict(self) -> str: ...
    @property
    def guards(self) -> Sequence[_Graded]: ...


def guard_headline(guards: Iterable[_Graded]) -> str:
    """`6 guards bite, 1 toothless`: a hunk's guard results in words."""
    counts: dict[str, int] = {}
    for g in guards:
        counts[g.verdict] = counts.get(g.verdict, 0) + 1
    bite = counts.pop("bites", 0)
    rest = [f"{counts[v]} {v}" for v in GUARD_ORDER if counts.get(v)]
    rest += [f"{n} {v}" for v, n in counts.items() if v not in GUARD_ORDER]
    if bite:
        return ", ".join([f"{bite} guard{'s bite' if bite != 1 else ' bites'}", *rest])
    total = sum(counts.values())
    return f"{total} guard{'s' if total != 1 else ''}: " + ", ".join(rest)


def only_a_missing_name(result: _Judged) -> bool:
    """True when a hunk's revert is `broken` and its guards say more (a new function: every test
    fails on the missing name, so the guards inside it are the evidence)."""
    return result.verdict == "broken" and bool(result.guards)


def hunk_words(result: _Judged) -> str:
    """A hunk's bite result as the review says it: its verdict, or for a revert that only removes
    a name, its guards' (`6 guards bite, 1 toothless (the revert only removes a name)`)."""
    if only_a_missing_name(result):
        return f"{guard_headline(result.guards)} ({NAME_ONLY_REASON})"
    return result.verdict
