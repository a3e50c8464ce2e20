"""Tests that read a changed source file as data: their failures are no bites of that file's hunks.

A test that opens `pkg/calc.py` (pins its hash, compares its text) fails whenever any byte of the
file changes, so every revert of its hunks "bites" although the test says nothing about what the
code does. The baseline records, per test, the opens of changed source files that are no import
(the origin plugin's audit hook, inside/read_audit.py: `Observed.reads`; for a process the test
starts, its inotify watch, inside/child_reads.py), and counts a test that opens or lists anything
under the scratch's `.git` as reading every changed source file: git's store holds a copy of each, and how it holds them (packed or loose) can tell a revert's run from
a control's as the file's bytes can. A hunk's or guard's failures by such a test are set aside
here. A revert failed only by them is `toothless`, with the reason; the finding `test-reads-changed-source` (findings/source_readers.py) names each.

Every graded run records its own readers too (`RevertResult.run_readers`): a test can read the file
only where it runs beside fewer tests than in the baseline (a revert's selection), and so be no
reader in the baseline. Its failures in that run are set aside the same way.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, TypeVar

from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.report import HunkResult

FINDING = "test-reads-changed-source"
"""The finding kind naming such a test."""

R = TypeVar("R", HunkResult, GuardResult)


def readers_by_file(source_readers: tuple[tuple[str, tuple[str, ...]], ...]) -> dict[str, frozenset[str]]:
    """Baseline.source_readers as a lookup: changed file -> the tests reading it as data."""
    return {path: frozenset(tests) for path, tests in source_readers}


def regrade(r: HunkResult, readers: Mapping[str, frozenset[str]]) -> HunkResult:
    """`r` (a hunk with its guards) with the failures of tests that read its file as data (in the
    baseline, or in the run graded itself: `run_readers`) not counted as bites."""
    mine = readers.get(r.file, frozenset())
    if not mine and not r.run_readers and not any(g.run_readers for g in r.guards):
        return r
    return replace(_one(r, mine, r.file), guards=tuple(_one(g, mine, r.file) for g in r.guards))


def _one(x: R, base: frozenset[str], file: str) -> R:
    if x.verdict != "bites" or not x.failing_tests:
        return x
    mine = base | frozenset(x.run_readers)
    dropped = [t for t in x.failing_tests if t in mine]
    if not dropped:
        return x
    kept = tuple(t for t in x.failing_tests if t not in mine)
    messages = {t: m for t, m in x.messages.items() if t not in mine}
    if kept:
        return replace(x, failing_tests=kept, messages=messages)
    shown = ", ".join(dropped[:3]) + (f" and {len(dropped) - 3} more" if len(dropped) > 3 else "")
    return replace(x, verdict="toothless", failing_tests=(), messages={},
                   reason=f"only tests that read {file} as data failed ({shown}): no bite ({FINDING})")
