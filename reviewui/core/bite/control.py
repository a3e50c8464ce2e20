"""The controls: null runs, shaped as the graded runs beside them, that must stay as green as the baseline.

A test can pass only when it runs as the baseline (coverage is active, the
tree's mtimes are all equal, a variable only the baseline has), or only in its
first few runs (a counter it keeps wherever state survives a run): it then
fails in the later revert runs, and every hunk would "bite" although nothing
about the code was learned. Each difference reviewui knows of is taken away
(scratch_build stamps one mtime on every file, every edit keeps it); the
controls catch the rest. The plan (plan.py) places them at random among every
session's reverts and guards and among the items run alone, at least two in
each, one always in the later half: a null revert writes and commits a
graded revert's file with its own code (marked: below) and runs that revert's tests, a null
guard swaps in its function's own code and runs that guard's tests, through
the same runner, fork, environment and plugins as the runs beside them.

A revert-shaped control writes the file's code as it is but not its bytes: every line that can
take one ends in a comment mark (inert_edit.null_bytes), so a test that tells the file's
text, however it read it, fails there as it fails on every revert. A test the origin plugin saw
reading the file in that run is a reader (its failures are no bites anywhere: source_readers.py),
and its failure in a control is none either.

A control that fails on the branch's own tests, or on anything but a test,
refuses the sweep (UntrustedCommand, exit 3, naming the tests): they can tell
a graded run from the baseline, so no bite they give can be believed. One that
fails only on old tests quarantines those instead, and no grade rests on them
(caught.py). A control whose run collected no test (pytest's exit 5)
vouches for nothing: its selection is not graded (said in the report), and
the sweep learns nothing only when no selection is left.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Collection, Iterable

from reviewui.core.bite.guard_check import BatchGuard
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.instrument import UntrustedCommand
from reviewui.core.bite.runctx import Observation

SHOWN = 5
"""Tests named in the refusal (the rest are counted)."""
NO_TESTS = 5
"""pytest's exit code when it collected no test."""


@dataclass(frozen=True)
class ControlResult:
    """What one control run came to."""

    shape: str
    """`revert` or `guard`: the runs it mirrored."""
    tests: tuple[str, ...]
    """The selection it ran (its neighbour's)."""
    failing: tuple[str, ...] = ()
    """The tests that failed (or why the run failed); empty when it stayed green."""
    no_tests: bool = False
    """True when pytest collected no test: no control is possible for this selection."""
    ran: bool = True
    """False when it did not run (the sweep was cancelled)."""


def judge(seen: Observation, shape: str, tests: tuple[str, ...], file: str = "") -> ControlResult:
    """A null run's verdict: green (as the baseline was), failed (naming what), or no test collected.
    `file`: the changed file it rewrote; a test seen reading that file in the run is excused."""
    run = seen.run
    if run.cancelled:
        return ControlResult(shape, tests, ran=False)
    if seen.foreign:
        return ControlResult(shape, tests, (seen.foreign,))
    if run.timed_out:
        return ControlResult(shape, tests, (f"the run timed out after {run.seconds:.1f}s",))
    failed = [t.id for t in run.tests if t.outcome in ("failed", "error")]
    readers = set(seen.observed.readers(file)) if file else set()  # no bites of theirs count either
    failing = tuple(t for t in failed if t not in readers)
    if failing:
        return ControlResult(shape, tests, failing)
    if run.pytest and run.returncode == NO_TESTS and not run.tests:
        return ControlResult(shape, tests, no_tests=True)
    if run.returncode not in (0, None) and not (failed and run.returncode == 1):  # 1: the readers' failures
        return ControlResult(shape, tests, (f"exit code {run.returncode} with no failing test reported",))
    ran = {t.id for t in run.tests}
    missing = [t for t in tests if "::" in t and t not in ran] if run.pytest and run.tests else []
    return ControlResult(shape, tests, tuple(f"{t} (not reported)" for t in missing))


def judge_guard(res: GuardResult, tests: tuple[str, ...]) -> ControlResult:
    """A null guard's verdict from its batch fork's grade (it must not bite)."""
    if res.verdict == "skipped":
        return ControlResult("guard", tests, ran=False)
    if res.verdict in ("bites", "timeout", "broken", "error"):
        why = res.failing_tests or (res.reason or res.verdict,)
        return ControlResult("guard", tests, tuple(why))
    return ControlResult("guard", tests)


def refusal(results: Iterable[ControlResult], named: Collection[str] = ()) -> UntrustedCommand | None:
    """The refusal the failed controls among `results` give, or None when none failed; it carries
    the tests among `named` (node ids: the baseline's) they failed on."""
    results = list(results)
    said: list[str] = []
    for shape, what, edit in (("revert", "the revert path", "reverted"), ("guard", "the guard batch", "edited")):
        bad = list(dict.fromkeys(t for r in results if r.shape == shape for t in r.failing))
        if not bad:
            continue
        shown = ", ".join(bad[:SHOWN]) + (f" and {len(bad) - SHOWN} more" if len(bad) > SHOWN else "")
        said.append(f"with nothing {edit}, a run through {what} failed where the baseline passed ({shown}); "
                     f"these tests can tell a {shape} run from the baseline, so no {shape} they fail in can be "
                     "believed")
    if not said:
        return None
    tests = [t for t in dict.fromkeys(t for r in results for t in r.failing) if t in named]
    return UntrustedCommand("the test command is not trusted for bites: " + "; and ".join(said), tests=tests)


def null_guard(guard: BatchGuard, head_text: Callable[[str], str | None]) -> BatchGuard | None:
    """`guard` with nothing edited (its function's code swapped for the head's own), as a null guard
    runs it (None: the head's file cannot be read)."""
    text = head_text(guard.job.guard.file)
    if text is None:
        return None
    return replace(guard, job=replace(guard.job, guard=replace(guard.job.guard, source=text)))
