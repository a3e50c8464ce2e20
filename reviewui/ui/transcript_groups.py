"""Subagent groups of a transcript as the view folds them: runs of turns under the Task call that started them.

A Claude Code session tags each subagent turn with the id of the Task call
that started it (`Turn.group`). The view shows such a run of turns folded
into one line until the reviewer opens it; this module finds the runs and
says what a folded one holds, so the view stays about drawing and the cursor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from reviewui.core.transcript import Turn


def folded_runs(turns: Sequence[Turn], shown: Sequence[int], open_groups: set[str]) -> dict[int, int]:
    """{position in `shown` of a folded run's first turn: the run's length}, for groups not in `open_groups`.

    A run is consecutive shown turns of one group; the same group cut by a
    main-agent turn makes two runs.
    """
    runs: dict[int, int] = {}
    start: int | None = None
    current: str | None = None
    for pos, ti in enumerate(shown):
        group = turns[ti].group
        if group is not None and group not in open_groups and group == current and start is not None:
            runs[start] += 1
            continue
        start, current = None, group
        if group is not None and group not in open_groups:
            start = pos
            runs[pos] = 1
    return runs


def started_groups(turn: Turn, groups: set[str]) -> list[str]:
    """The groups whose Task call `turn` made (ids of its tool calls that are groups), in call order."""
    return [c.id for c in turn.tool_calls if c.id is not None and c.id in groups]


def fold_summary(turns: Sequence[Turn], key: str) -> str:
    """The one line a folded run shows: how many turns, how to open it, and what would otherwise be hidden."""
    flags: dict[str, int] = {}
    written: dict[str, None] = {}
    for t in turns:
        for f in t.flags:
            flags[f] = flags.get(f, 0) + 1
        for p in t.files_written:
            written.setdefault(p, None)
    n = len(turns)
    parts = [f"↳ subagent: {n} turn{'s' if n != 1 else ''} ({key} to expand)"]
    # Folded is not hidden: what a reviewer would look for inside is named on the line.
    if written:
        parts.append(f"wrote {len(written)} file{'s' if len(written) != 1 else ''}")
    if flags:
        parts.append(", ".join(f"{f} ×{c}" for f, c in flags.items()))
    return "  ·  ".join(parts)
