"""The null-revert control: before any revert is graded, the revert path with nothing reverted must stay green.

A test can pass only when it runs as the baseline (coverage is active, the
tree's mtimes are all equal, a variable only the baseline has): it then
fails in every revert run, and every hunk would "bite" although nothing
about the code was learned. Each difference reviewui knows of is taken away
(scratch_build stamps one mtime on every file, every edit keeps it); this
run catches the rest: the same checkout, the same rewrite of a changed file
(its own bytes, committed as a revert is), the same runner (warm or cold),
environment and selection as a revert run, and, where the reverts are
batched, the same fork of a configured session; the guard batch gets one
guard with nothing edited (`null_guard_control`). A test that fails here
passed in the baseline only because it was the baseline: the command is not
trusted for bites (UntrustedCommand, exit 3, naming those tests).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePosixPath
from typing import Callable

from reviewui.core.bite import guard_batch, origin
from reviewui.core.bite.guard_batch import BatchGuard
from reviewui.core.bite.instrument import UntrustedCommand
from reviewui.core.bite.report import Baseline
from reviewui.core.bite.revert_batch import Edit, Forked, ForkSession
from reviewui.core.bite.runctx import Observation, RunContext
from reviewui.core.diff import FileDiff, Hunk
from reviewui.core.run.runner import RunFiles, RunResult
from reviewui.core.run.scratch_build import commit_scratch
from reviewui.core.run.worktree import Scratch, WorktreePool
from reviewui.core.target import Target

SHOWN = 5
"""Tests named in the refusal (the rest are counted)."""
ARGV_BUDGET = 100_000
"""Characters of node ids the control names on its command line at most (else it names the files)."""


def control_tests(baseline: Baseline, guided: bool, selected: tuple[str, ...]) -> tuple[str, ...]:
    """What the control runs: the baseline's tests by node id, as a coverage-guided revert names
    them, else (or when they would not fit a command line) what the baseline was given."""
    if guided and baseline.tests and sum(len(t) + 1 for t in baseline.tests) <= ARGV_BUDGET:
        return baseline.tests
    return selected


def null_revert_control(scratch: Scratch, target: Target, ctx: RunContext, selected: tuple[str, ...],
                        targets: list[tuple[FileDiff, Hunk]], baseline: Baseline, limit: float,
                        batch: bool = True) -> None:
    """Run the selected tests through the revert path with nothing reverted; raise UntrustedCommand
    when that run is not as green as `baseline` (a green baseline of the same tests). `batch`:
    also through a fork of a configured session, as batched reverts run."""
    if ctx.cancel is not None and ctx.cancel.is_set():
        return
    rel = next((f.path for f, _ in targets if f.status != "deleted"), None)
    batched = batch and ctx.pytest_mode and rel is not None and bool(selected) and _batchable(rel)
    forks = ForkSession([], limit)

    def through_revert_path(forked: bool) -> Observation:
        scratch.checkout(target.head)
        path = scratch.path / rel if rel is not None else None
        try:
            if path is not None and path.is_file() and rel is not None:
                # Its own bytes, written and committed as a revert writes and commits the reverted ones.
                scratch.edit_files({rel: path.read_bytes()})
                if forked:
                    forks.edits = [Edit({rel: path.read_bytes()}, selected)]
                    forks.forked = [Forked()]
            else:
                commit_scratch(scratch.path)
            files = RunFiles(lambda d: forks.setup(d, scratch), forks.collect) if forked and forks.edits else None
            return ctx.run(scratch.path, selected, limit, extra=origin.QUIET_STOP, in_run_dir=files)
        finally:
            scratch.reset()

    seen = through_revert_path(batched)
    if batched and seen.run.returncode == 5 and not seen.run.tests:
        # The fork's tests changed the tree, so the session collected nothing after it (as
        # revert_batch_child does): the reverts after such a one run on their own, and so does this.
        seen = through_revert_path(False)
    if seen.run.cancelled:
        return
    bad = _failed(seen, baseline)
    forked = forks.forked[0] if forks.edits else None
    if not bad and forked is not None and forked.run is not None and forked.observed is not None:
        bad = _failed(Observation(forked.run, forked.observed, forked.tampered
                                  or origin.foreign(forked.observed.modules, scratch.path, ctx.modules,
                                                                 ctx.argv[0])), baseline)
    if bad:
        shown = ", ".join(bad[:SHOWN]) + (f" and {len(bad) - SHOWN} more" if len(bad) > SHOWN else "")
        raise UntrustedCommand(
            "the test command is not trusted for bites: with nothing reverted, a run through the revert "
            f"path failed where the baseline passed ({shown}); these tests can tell a revert run from the "
            "baseline, so no revert they fail in can be believed",
            tests=[t for t in bad if t in baseline.tests],  # node ids only (prepare quarantines old ones)
        )


def _batchable(rel: str) -> bool:
    path = PurePosixPath(rel)
    return path.suffix == ".py" and path.name != "conftest.py"


def _failed(seen: Observation, baseline: Baseline) -> list[str]:
    """What of this run is not as green as the baseline: the failing tests (or why the run failed)."""
    run: RunResult = seen.run
    if seen.foreign:
        return [seen.foreign]
    if run.timed_out:
        return [f"the run timed out after {run.seconds:.1f}s"]
    failing = [t.id for t in run.tests if t.outcome in ("failed", "error")]
    if failing:
        return failing
    if run.returncode not in (0, None):
        return [f"exit code {run.returncode} with no failing test reported"]
    ran = {t.id for t in run.tests}
    missing = [t for t in baseline.tests if t not in ran] if run.pytest and run.tests else []
    return [f"{t} (not reported)" for t in missing]


def null_guard(guard: BatchGuard, head_text: Callable[[str], str | None]) -> BatchGuard | None:
    """The guard batch's own control: `guard` with nothing edited (its function's code swapped for
    the head's own), as `null_guard_control` grades it (None: the head's file cannot be read)."""
    text = head_text(guard.job.guard.file)
    if text is None:
        return None
    return replace(guard, job=replace(guard.job, guard=replace(guard.job.guard, source=text)))


def null_guard_control(pool: WorktreePool, target: Target, guard: BatchGuard,
                       head_text: Callable[[str], str | None], ctx: RunContext, limit: float) -> None:
    """Grade `guard` with nothing edited in a batch session of its own; raise UntrustedCommand when
    it bites: its tests can tell a guard run from the baseline."""
    null = null_guard(guard, head_text)
    if null is None or (ctx.cancel is not None and ctx.cancel.is_set()):
        return
    graded, _ = guard_batch.run_batch(pool, target, ctx, [null], limit, ctx.cancel)
    bad = [t for _, res in graded if res.verdict == "bites" for t in (res.failing_tests or ("(a test)",))]
    if bad:
        shown = ", ".join(bad[:SHOWN]) + (f" and {len(bad) - SHOWN} more" if len(bad) > SHOWN else "")
        raise UntrustedCommand(
            "the test command is not trusted for bites: with nothing edited, a run through the guard "
            f"batch failed where the baseline passed ({shown}); these tests can tell a guard run from the "
            "baseline, so no guard they fail in can be believed"
        )
