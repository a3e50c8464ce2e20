"""Bite-checks: revert one hunk in a scratch worktree, rerun the tests, grade the result.

`run_bite(target, diff, settings, ...)` is the entry point for the UI (`b`,
`B`) and for `reviewui bite`. The steps, each chosen so the evidence cannot lie:

0. Hunks of files that are not code are `not-code` (unless include_config);
   with no code hunk at all the report says "nothing to bite-check" and
   nothing runs.
1. Baseline (selection.py, by the base commit's test layout, test_layout.py):
   changed test files and test files importing a changed helper,
   `__init__.py` or conftest; the whole suite when there are none, or when
   the branch changes data files (their readers are recorded). A whole-suite
   run names the test modules pytest would not find by itself (a root
   test.py). Tests red at the head beside green ones are quarantined
   (baseline.quarantine; a module that cannot be imported, after a second
   run past collection errors) and left out of every later run.
   Every run (runctx.py, origin.py) puts the scratch's import roots first
   and records where the changed modules came from: a module from outside
   the scratch (editable install) makes the run `broken`. For
   `<python> -m pytest` with coverage the baseline also records which test
   executes which changed line (`coverage_map`); a map blind to an imported
   changed module is dropped. Not green: every hunk is `skipped`, with
   pytest's own error lines and a fix hint (baseline.py).
2. Instrument check, once (prepare.py): pytest must report a throw-away,
   always-failing test as failed (and exit non-zero). Any other command must
   exit non-zero when every changed source file is replaced by garbage; a
   command that cannot fail raises UntrustedCommand instead of calling hunks
   toothless. With two slots it runs beside the baseline, and the reverts may
   start before it ends: nothing is reported until it has passed. Every
   pytest run carries a canary test that must fail (canary.py): a run whose
   canary passes is `broken`.
3. Per hunk (Prepared.plan): `uncovered` straight from the coverage map, when
   no test in the suite executes it (a hunk no selected test executes sends
   the whole suite through one measured run at the baseline, within
   `full-suite-budget`: prepare.search_suite), or revert only that hunk, run
   the tests that execute it (plus data-file readers), and grade
   (revert_grade.py; cross-hunk by ast, crosshunk.py). With pytest, the
   reverts of Python files and the batchable guards share one configured
   pytest session per slot (revert_batch.py, guard_batch.py), a share of the
   guards going to whichever session is free first (guard_tail.py); the rest
   run one by one. Slots work in parallel; results stream through `on_result` /
   `on_progress`; the `cancel` event kills running process groups promptly.
4. Controls (control.py, plan.py): null reverts and null guards, shaped as the
   graded runs, at random among them; results are held until every control is
   back (Sweep.hold). A control that fails on the branch's own test, or on
   anything but an old test, refuses the sweep (UntrustedCommand names the
   tests); one that fails only on old tests quarantines them with why, and no
   grade rests on them (caught.py).

Pass a `BiteCache` (one per review session) to reuse the baseline and the
instrument check across `b` presses on the same head.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import shutil
import threading
from dataclasses import replace
from typing import Callable, Collection

from reviewui.core.bite import guard_batch, guard_check, revert_batch  # noqa: F401  (tests patch through them)
from reviewui.core.bite.cache import BiteCache
from reviewui.core.bite.fallback import control_alone, run_alone
from reviewui.core.bite.executor import Execution, Executor, SweepJob
from reviewui.core.bite.executor_local import LocalExecutor
from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.instrument import UntrustedCommand
from reviewui.core.bite.plan import SweepPlan
from reviewui.core.bite.prepare import Prepared
from reviewui.core.bite.progress import ProgressSink
from reviewui.core.bite.report import Baseline, BiteReport, HunkResult
from reviewui.core.bite.reuse import GradeBook
from reviewui.core.bite.runctx import RunContext
from reviewui.core.bite.selection import checkable_hunks, parse_hunk_spec, selected_test_files
from reviewui.core.bite.sweep import LOST, Spec, Sweep
from reviewui.core.config import Settings
from reviewui.core.diff import Diff
from reviewui.core.run.alike import AlikeRuns
from reviewui.core.run.worktree import WorktreePool
from reviewui.core.target import Target
from reviewui.core.witness.budget import Budget
from reviewui.core.witness.phase import WitnessPhase

Held = HunkResult | tuple[GuardJob, GuardResult]
"""A graded item of a sweep: a hunk's result, or a guard's with its job."""

__all__ = ["LOST", "BiteCache", "UntrustedCommand", "checkable_hunks", "parse_hunk_spec", "run_bite", "selected_test_files"]


def run_bite(
    target: Target,
    diff: Diff,
    settings: Settings,
    *,
    hunks: list[tuple[str, int]] | None = None,
    all_tests: bool = False,
    jobs: int | None = None,
    timeout: float | None = None,
    test_cmd: str | None = None,
    on_result: Callable[[HunkResult], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
    cache: BiteCache | None = None,
    guards: bool = False,
    include_config: bool = False,
    engine: Callable[[WorktreePool], Executor] | None = None,
    own_tests: Collection[str] | None = None,
    on_tests: ProgressSink | None = None,
    grades: GradeBook | None = None,
    witness: Budget | None = None,
) -> BiteReport:
    """Bite-check the given hunks (default: every code hunk) and return the report.

    Hunks of files that are not code come back `not-code` unless
    `include_config`. Raises UntrustedCommand when the command fails the
    instrument check, ReviewError when it is unusable (unparseable, cannot be
    started) or for unknown hunks. With `guards`, each result also carries its
    guard reverts (guard_check.py). `engine` makes the executor that carries
    out the plan (default: the local one, on this machine's slots). `on_tests` hears the
    baseline's progress (tests done of collected, elapsed) while it runs. `own_tests` (function ids,
    `file::Class::test`) are the branch's new and changed tests: red at the head they are left
    out of later runs as quarantined old tests are, but reported apart (`Baseline.own_red`); an old
    test a control catches is quarantined, one of these refuses (caught.py). None: not known, so
    every test counts as the branch's own and any control that fails refuses. With `grades`, each
    hunk's and guard's grade an earlier sweep kept under the same key is reused instead of run
    (reuse.py), and what this sweep grades is kept there. With a `witness`
    budget, each toothless guard and hunk carries a witness search (core/witness/).
    """
    spec = Spec.of(diff, settings, test_cmd, hunks, include_config)
    for r in spec.not_code:
        if on_result:
            on_result(r)
    if not spec.targets:
        return BiteReport(baseline=Baseline("green", reason="nothing to bite-check: no source hunk"),
                          results=spec.not_code, selected_tests=(), test_command=spec.command,
                          selection="nothing to bite-check: the branch changes no source code")
    sweep = Sweep(target, diff, settings, spec, all_tests, timeout or settings.timeout, on_result, on_progress,
                  own_tests, on_tests)
    sweep.book = grades
    sweep.reuse_tag = "" if witness is None else f"witness {witness!r}"
    jobs = max(1, jobs or os.cpu_count() or 1)
    own_cache = cache is None
    cache = cache or BiteCache()
    side = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="guards")
    try:
        with WorktreePool(target.repo_dir, jobs if guards else min(jobs, max(1, len(spec.targets)))) as pool, \
                contextlib.ExitStack() as before_close:
            pool.look_alike(AlikeRuns.of(diff, target.head))  # every run's files and store alike (alike.py)
            ctx = sweep.context(pool, cache, _Halt(cancel))
            # The guards need nothing from the baseline: made meanwhile, they are ready when it is.
            made = side.submit(guard_check.guards_of, spec.targets, sweep.head.raw) if guards else None
            prepared, check_left = sweep.prepare(pool, ctx, cache, before_close)
            made_guards = made.result() if made is not None else []
            executor = (engine or LocalExecutor)(pool)
            plan = sweep.plan(prepared, made_guards, ctx, executor.slots, getattr(executor, "session_share", None))
            job = SweepJob(target, diff, ctx, sweep.per_run(prepared), sweep.head.text)
            execution = executor.start(plan, job)
            phase = None if witness is None else before_close.enter_context(contextlib.closing(WitnessPhase(
                pool, target, diff, ctx, made_guards, sweep.head.raw, sweep.tree, witness, sweep.per_run(prepared),
                "" if sweep.pytest_mode else "witnesses need a pytest command (the plugins run in pytest)")))
            join = guard_check.GuardJoin(sweep.join_jobs(plan), phase.hold(sweep.emit) if phase else sweep.emit)
            held = _settled(sweep, execution, plan, prepared, pool, job, cache, check_left)
            _report_all(sweep, join, plan, held, phase)
    finally:
        side.shutdown(wait=True)
        if own_cache:
            cache.close()
        shutil.rmtree(sweep.work, ignore_errors=True)
    report = sweep.report(prepared, plan, guards)
    return replace(report, witnesses_checked=True) if witness is not None else report


def _settled(sweep: Sweep, execution: Execution, plan: SweepPlan, prepared: Prepared, pool: WorktreePool,
             job: SweepJob, cache: BiteCache, check_left: Callable[[], None] | None) -> list[Held]:
    """Every graded run of the plan, once the instrument check and every control passed.

    Nothing is reported before that: the controls are among the graded runs, so the results
    are held to the end (their count goes out as progress). A failure (a refusal, a cancel)
    stops whatever still runs and is raised.
    """
    try:
        if check_left is not None:
            check_left()
            sweep.keep(cache, prepared)
        execution.settle()
        held = sweep.hold(execution.results(), plan, prepared.baseline,
                          lambda test: _fails_alone(pool, job.target, job.ctx, test, sweep.per_run(prepared)),
                          lambda item: control_alone(pool, job, item))
        return sweep.recheck_readers(held, lambda item: run_alone(pool, job, item),
                                     lambda item: control_alone(pool, job, item))
    except BaseException:
        job.ctx.cancel.set()  # type: ignore[union-attr]  # always a _Halt here
        execution.cancel()
        raise


def _report_all(sweep: Sweep, join: guard_check.GuardJoin, plan: SweepPlan, held: list[Held],
                phase: WitnessPhase | None) -> None:
    """Report every hunk and guard: known without a run, reused from an earlier sweep, graded
    now; then check that nothing planned went unreported, and keep the grades for later sweeps."""
    for r in plan.known:
        join.hunk(r)
    for reused_job, g in sweep.reused:
        join.guard(reused_job, g)
    for item in held:
        join.take(item)
    if phase is not None:
        phase.drain()  # every witness search ends before the completeness check
    sweep.complete(join)
    sweep.keep_grades()


def _fails_alone(pool: WorktreePool, target: Target, ctx: RunContext, test: str, limit: float) -> bool | None:
    """Whether `test` fails when run alone at the head (None: the sweep was cancelled), to say why
    a control caught it (caught.py)."""
    if ctx.cancel is not None and ctx.cancel.is_set():
        return None
    with pool.acquire() as scratch:
        scratch.checkout(target.head)
        try:
            run = ctx.run(scratch.path, [test], limit).run
        finally:
            scratch.reset()
    if run.cancelled:
        return None
    return run.killed or not run.tests or any(o.outcome in ("failed", "error") for o in run.tests)


class _Halt(threading.Event):
    """Set by the sweep itself, or by the reviewer's own cancel event (read, never set)."""

    def __init__(self, cancel: threading.Event | None) -> None:
        super().__init__()
        self._cancel = cancel

    def is_set(self) -> bool:
        return super().is_set() or (self._cancel is not None and self._cancel.is_set())
