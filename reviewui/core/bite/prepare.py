"""Before any revert is graded: the baseline (with its coverage map) and the instrument check.

With a warm server per slot, the baseline runs in the slot whose server is
ready first and the instrument check (instrument.side_checks) beside it in
the other. The reverts may start as soon as the baseline is green: the
check's verdict is then a `Pending` that the sweep settles before it reports
any result, so the slot that finishes the baseline first does not wait for
the other.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
from contextlib import AbstractContextManager
import os
import shutil
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Collection

from reviewui.core.bite import coverage_map as cm
from reviewui.core.bite import guard_check
from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.guards import Guard
from reviewui.core.bite.baseline import classify, collection_broken, quarantine, quarantine_collection
from reviewui.core.bite.canary import TAMPERED
from reviewui.core.bite.instrument import UntrustedCommand, instrument_check, side_checks
from reviewui.core.bite.origin import ChangedModule
from reviewui.core.bite.report import Baseline
from reviewui.core.bite.runctx import Observation, RunContext
from reviewui.core.bite.selection import StaticSelection, selection_note
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk
from reviewui.core.run.runner import RunFiles
from reviewui.core.run.scratch import Scratch
from reviewui.core.run.worktree import WorktreePool
from reviewui.core.target import Target


@dataclass(frozen=True)
class SuiteSearch:
    """The one measured run of the whole suite that looks for the tests of the hunks no selected
    test executes (taken at the baseline, within `full-suite-budget`)."""

    cov: cm.CoverageMap | None
    """Which suite test executed which changed line; None when the suite was not searched."""
    green: tuple[str, ...] = ()
    """Node ids that passed in that run (the only ones a hunk is graded with)."""
    red: frozenset[str] = frozenset()
    """Node ids that failed in it: red at the head, never used to grade."""
    why_not: str = ""
    """Why the suite was not searched ("" when it was)."""


@dataclass(frozen=True)
class HunkPlan:
    """How one hunk is graded: `uncovered` (run nothing) or a run of `tests`."""

    uncovered: bool
    """True when no test to search executes the hunk."""
    tests: tuple[str, ...] = ()
    """What its revert runs (node ids or files; () is the whole suite)."""
    reason: str = ""
    """Why it is uncovered."""
    scope: str = ""
    """`selected` or `suite`: the tests searched (HunkResult.scope); "" without a coverage map."""


@dataclass(frozen=True)
class Prepared:
    """What every revert of a sweep needs from the baseline (cached across `b` presses)."""

    baseline: Baseline
    cov: cm.CoverageMap | None
    chosen: tuple[str, ...] = ()
    """Node ids chosen beyond coverage: tests in statically selected files and readers of changed data."""
    note: str = ""
    """How many tests were selected and why."""
    suite: SuiteSearch | None = None
    """The whole suite's measured run, when some hunk is executed by no selected test."""

    def plan(self, h: Hunk, head_text: str | None, selected: tuple[str, ...], whole: bool,
             complete: bool = False) -> HunkPlan:
        """Which tests hunk `h` is graded with (`head_text`: its file at the head; `whole`: the
        baseline ran the whole suite; `complete`: the selection holds every test module).

        A hunk no selected test executes is looked for in the whole suite's run
        (`suite`): graded by the green tests there that execute it, `uncovered`
        only when none does; without that run it is uncovered in the `selected` scope.
        """
        everything = self.chosen if whole and self.chosen and self.cov is None else selected
        if self.cov is None:
            return HunkPlan(False, everything)
        quarantined = frozenset(self.baseline.left_out)
        scope = "suite" if whole or complete else "selected"
        sel = self.cov.select(h, head_text, skip=quarantined, scope=scope)
        if sel.choice == "tests":
            return HunkPlan(False, tuple(dict.fromkeys([*sel.tests, *self.chosen])), scope=scope)
        if sel.choice == "all":
            return HunkPlan(False, everything, scope=scope)
        search = self.suite
        if scope == "suite" or search is None or search.cov is None:
            why = f" ({search.why_not})" if search is not None and search.why_not and scope != "suite" else ""
            return HunkPlan(True, reason=sel.reason + why, scope=scope)
        found = search.cov.select(h, head_text, skip=quarantined | search.red, scope="suite")
        if found.choice == "uncovered":
            return HunkPlan(True, reason=found.reason, scope="suite")
        # Executed outside a test body (import time, a fixture): every green test of the suite.
        tests = found.tests if found.choice == "tests" else search.green
        return HunkPlan(False, tuple(dict.fromkeys([*tests, *self.chosen])), scope="suite")

    def guard_jobs(self, guards: list[Guard], selected: tuple[str, ...]) -> list[GuardJob]:
        """Each guard with the tests its run needs, chosen as `plan` chooses a hunk's: never a
        quarantined test, and the whole suite's run searched for a line no selected test executes."""
        red = frozenset(self.baseline.left_out)
        out: list[GuardJob] = []
        for job in guard_check.select_all(guards, self.cov, selected):
            sel = job.selection
            if sel.choice == "uncovered" and self.suite is not None and self.suite.cov is not None:
                found = guard_check.select_for_guard(self.suite.cov, job.guard)
                line = job.guard.line
                sel = (cm.Selection("uncovered", reason=f"no test in the suite executes line {line}")
                       if found.choice == "uncovered" else
                       found if found.choice == "tests" else cm.Selection("tests", self.suite.green))
                red |= self.suite.red
            if sel.choice == "tests":
                kept = tuple(t for t in sel.tests if t not in red)
                sel = cm.Selection("tests", kept) if kept else cm.Selection(
                    "uncovered", reason=f"only tests red at the head (quarantined) execute line {job.guard.line}")
            out.append(GuardJob(job.guard, sel, sel.tests if sel.choice == "tests" else job.tests))
        return out


Pending = Callable[[], None]
"""The instrument check still running: returns once it passed, raises UntrustedCommand if not."""


def prepare(
    pool: WorktreePool, target: Target, ctx: RunContext, selected: tuple[str, ...], static: StaticSelection,
    targets: list[tuple[FileDiff, Hunk]], limit: float | None, read: Callable[[str], str | None] | None = None,
    own: Collection[str] = (),
) -> tuple[Prepared, Pending | None]:
    """Run the baseline and the instrument check: (what the reverts need, the check if it is
    still running). Raises UntrustedCommand when the check has already failed. `own`: the
    branch's new and changed tests (function ids), never quarantined when red.

    With `read` (a head file's text), a hunk no selected test executes sends the whole
    suite through one measured run (`SuiteSearch`) to find the tests that do."""
    # --timeout bounds every run, the baseline included (it runs under coverage, so give it room with --timeout).
    baseline_limit = limit if limit else 600.0
    # The instrument check needs nothing from the baseline: with a second slot it runs there
    # meanwhile (pytest's half, then garbage in every changed module), and its verdict is read
    # once the baseline is green.
    early: cf.Future[bool | None] | None = None
    stop_side = _Stop(ctx.cancel)
    side = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="instrument") if ctx.pytest_mode and pool.size > 1 \
        else None
    first = _first_ready(pool, target, ctx) if side is not None else None
    if side is not None:
        other = next((s for s in pool.scratches if s is not first), None) if first is not None else None
        # Taken here, not in the thread: the reverts may start before the thread does (the
        # baseline is green first), and the check must not wait for one of them to end.
        lease = pool.acquire(other)
        held = lease.__enter__()
        early = side.submit(_in_slot, lease, held,
                            lambda s: side_checks(s, target, replace(ctx, cancel=stop_side), selected, baseline_limit,
                                                  fresh=s is other))
    pending: Pending | None = None
    green = False
    try:
        prepared, pending = _prepare_in_slot(pool, target, ctx, selected, static, targets, baseline_limit, early,
                                             first, read, own)
        green = prepared.baseline.status == "green"
        return prepared, pending
    finally:
        if side is not None:
            if not green:
                stop_side.set()  # nothing the check says is needed past a baseline that is not green: no wait
            # Its slot is back in the pool once the check ends; a pending check ends it itself.
            side.shutdown(wait=pending is None)


class _Stop(threading.Event):
    """Set to stop the instrument check beside the baseline, or set when the sweep is cancelled."""

    def __init__(self, outer: threading.Event | None) -> None:
        super().__init__()
        self._outer = outer

    def is_set(self) -> bool:
        return super().is_set() or (self._outer is not None and self._outer.is_set())


def _coverage_files(keep: Path, scratch: Path, py_files: list[str], support: cm.CoverageSupport) -> RunFiles:
    """The rcfile and plugin of a measured run, written into the run's own directory (the one
    place a warm fork and a sandboxed cold run both see), its data copied to `keep` after."""

    def setup(run_dir: Path) -> dict[str, str]:
        return cm.prepare(run_dir / "cov", scratch, py_files, support, plugin_dir=run_dir / "plugin")

    def collect(run_dir: Path) -> None:
        if (run_dir / "cov").is_dir():
            shutil.copytree(run_dir / "cov", keep, dirs_exist_ok=True)

    return RunFiles(setup, collect)


def _quarantined(baseline: Baseline, ctx: RunContext, own: Collection[str]) -> Baseline:
    """The baseline with its red-at-head tests left out (baseline.quarantine: the old ones
    quarantined, the branch's own `own` kept apart), every later run of the sweep told so."""
    baseline = quarantine(baseline, own)
    ctx.quarantined = baseline.left_out
    return baseline


def _past_collection_errors(
    scratch: Path, ctx: RunContext, selected: tuple[str, ...], limit: float, cov_args: list[str],
    measured: RunFiles | None, cov_dir: Path, first: tuple[Observation, Baseline], own: Collection[str] = (),
) -> tuple[Observation, Baseline]:
    """The baseline run again past its collection errors (`--continue-on-collection-errors`): the
    modules that cannot be imported at the head are quarantined when other tests are green there,
    else the first run's broken baseline stands."""
    shutil.rmtree(cov_dir, ignore_errors=True)  # the first run measured only imports
    seen = ctx.run(scratch, selected, limit, argv=[*ctx.argv, *cov_args, "--continue-on-collection-errors"],
                   record_opens=True, in_run_dir=measured, coverage=measured is not None, phase="baseline")
    baseline = quarantine_collection(seen.run, own)
    if baseline is None:
        return first
    ctx.quarantined = baseline.left_out
    return seen, baseline


def _first_ready(pool: WorktreePool, target: Target, ctx: RunContext) -> Scratch | None:
    """The slot whose warm server is ready first, every slot checked out at head meanwhile
    (None: no warm server). The baseline, longer than the side checks, starts there: the
    servers of a sweep are often ready a few hundred milliseconds apart."""
    if ctx.warm is None:
        return None
    with contextlib.ExitStack() as held:
        for scratch in [held.enter_context(pool.acquire()) for _ in range(pool.size)]:
            scratch.checkout(target.head)
    first = ctx.warm.first_ready([s.path for s in pool.scratches])
    return None if first is None else pool.scratches[first]


def _in_slot(lease: AbstractContextManager[Scratch], scratch: Scratch,
             job: Callable[[Scratch], bool | None]) -> bool | None:
    """Run `job` in the slot `lease` holds, then give the slot back."""
    try:
        return job(scratch)
    finally:
        lease.__exit__(None, None, None)


def _prepare_in_slot(
    pool: WorktreePool, target: Target, ctx: RunContext, selected: tuple[str, ...], static: StaticSelection,
    targets: list[tuple[FileDiff, Hunk]], baseline_limit: float, early: cf.Future[bool | None] | None,
    first: Scratch | None = None, read: Callable[[str], str | None] | None = None, own: Collection[str] = (),
) -> tuple[Prepared, Pending | None]:
    py_files = sorted({f.path for f, _ in targets if f.path.endswith(".py") and f.status != "deleted"})
    cov_dir = ctx.work / "cov"
    with pool.acquire(prefer=first) as scratch:
        if scratch is not first:  # `first` was checked out at head and nothing ran in it since
            scratch.checkout(target.head)
        measured: RunFiles | None = None
        cov_args: list[str] = []
        if ctx.pytest_mode and py_files:
            support = cm.probe_coverage(ctx.argv[0], os.environ.get("PATH", os.defpath))
            args = cm.coverage_args(ctx.argv, support) if support else None
            if support and args is not None:
                measured, cov_args = _coverage_files(cov_dir, scratch.path, py_files, support), args
        # Measured in a warm fork when the server can serve it, else under `coverage run`.
        seen = ctx.run(scratch.path, selected, baseline_limit, argv=[*ctx.argv, *cov_args], record_opens=True,
                       in_run_dir=measured, coverage=measured is not None, phase="baseline")
        if seen.foreign and seen.foreign.startswith(TAMPERED):
            # The baseline's canary passed: no run of this command can be believed (canary.py).
            raise UntrustedCommand(f"the test command cannot be trusted: {seen.foreign}; check the branch's "
                                   "conftest files and plugins")
        baseline = _quarantined(classify(seen.run, ctx.pytest_mode, " ".join(ctx.argv)), ctx, own)
        if baseline.status == "broken" and ctx.pytest_mode and collection_broken(seen.run):
            seen, baseline = _past_collection_errors(scratch.path, ctx, selected, baseline_limit, cov_args, measured,
                                                     cov_dir, (seen, baseline), own)
        if seen.foreign and baseline.status == "green":
            baseline = replace(baseline, status="broken", reason=seen.foreign)
        readers = tuple((m.path, seen.observed.readers(m.path)) for m in ctx.modules)
        baseline = replace(baseline, source_readers=tuple((p, tests) for p, tests in readers if tests))
        cov, note = None, ""
        if baseline.status in ("broken", "timeout") and measured is not None and not ctx.killed():
            # Never call a baseline broken that the plain command passes: measuring it may be what broke it.
            plain = ctx.run(scratch.path, selected, baseline_limit, record_opens=True, phase="baseline")
            again = _quarantined(classify(plain.run, ctx.pytest_mode, " ".join(ctx.argv)), ctx, own)
            if again.status == "green" and not plain.foreign:
                note = (f"; the run measured with coverage was {baseline.status} ({baseline.reason[:120]}) and the "
                        "plain one green: no coverage map, every hunk runs all selected tests")
                seen, baseline, measured = plain, again, None
        if baseline.status == "green" and measured is not None:
            cov = cm.read_map(cov_dir, scratch.path, py_files, baseline.tests)
            if cov is not None and (blind := cov.blind_to(ctx.modules, seen.observed.modules)):
                cov, note = None, (f"; coverage map not trusted ({blind} was imported but no line of it was "
                                   "recorded): every hunk is reverted")
        if cov is not None:
            baseline = replace(baseline, coverage_guided=True)
        suite: SuiteSearch | None = None
        if cov is not None and selected and read is not None and _unexecuted(cov, targets, read, baseline.left_out):
            suite = search_suite(scratch.path, ctx, py_files, ctx.work / "suite-cov")
        pending: Pending | None = None
        if baseline.status == "green":
            imported = [m for m in ctx.modules if m.name in seen.observed.modules]
            pending = _instrument(scratch, target, ctx, selected, targets, baseline_limit, imported, early,
                                  redo=bool(baseline.left_out))
        openers = tuple(sorted({t for ts in seen.observed.opens.values() for t in ts}))
        in_files = tuple(t for t in baseline.tests if t.split("::", 1)[0] in static.files) if selected == () else ()
        chosen = tuple(dict.fromkeys([*in_files, *openers]))
        note = selection_note(static, selected, baseline.tests, openers, cov) + note
        if ctx.xdist_off:
            note += "; pytest-xdist off (-n 0): its workers would not see the run's tree and import paths"
        if suite is not None:
            note += ("; the whole suite was searched for the tests of hunks no selected test runs" if suite.cov
                     is not None else f"; the whole suite was not searched ({suite.why_not})")
        return Prepared(baseline, cov, chosen, note, suite), pending


def _instrument(scratch: Scratch, target: Target, ctx: RunContext, selected: tuple[str, ...],
                targets: list[tuple[FileDiff, Hunk]], baseline_limit: float, imported: list[ChangedModule],
                early: cf.Future[bool | None] | None, *, redo: bool) -> Pending | None:
    """The instrument check after a green baseline (instrument.py; raises UntrustedCommand), or what
    is left of it to read when its halves still run beside the baseline (`early`). `redo`: the
    baseline left red tests out, so the garbage half, which ran them, runs again without them.
    The null-revert controls run among the graded runs, with their selections (control.py); the old
    tests they catch are quarantined there (caught.py), never here."""
    if early is None:
        instrument_check(scratch, target, ctx, selected, targets, baseline_limit, imported)
        return None
    if redo:
        # The garbage half beside the baseline ran the red tests too, whose failure answers nothing.
        early.result()  # raises UntrustedCommand for pytest's half
        instrument_check(scratch, target, ctx, selected, targets, baseline_limit, imported, pytest_checked=True)
        return None

    # Both halves ran beside the baseline (instrument.side_checks): only their verdict is left to
    # read, and nothing of it needs this slot.
    def pending() -> None:
        instrument_check(scratch, target, ctx, selected, targets, baseline_limit, imported,
                         pytest_checked=True, garbage_passed=early.result())  # raises UntrustedCommand
    if early.done():
        pending()  # already decided: no need to carry it
        return None
    return pending


def _unexecuted(cov: cm.CoverageMap, targets: list[tuple[FileDiff, Hunk]], read: Callable[[str], str | None],
                quarantined: tuple[str, ...]) -> bool:
    """True when some hunk of `targets` is executed by no selected (green) test."""
    skip = frozenset(quarantined)
    return any(cov.select(h, read(f.path), skip=skip).choice == "uncovered" for f, h in targets
               if f.path.endswith(".py") and f.status != "deleted")


def search_suite(scratch: Path, ctx: RunContext, py_files: list[str], keep: Path) -> SuiteSearch:
    """Run the whole suite once under coverage, within `full-suite-budget` seconds, and map it.

    Its red tests are kept apart (they grade nothing); a run that does not finish, is broken
    or cannot be measured is a search not made, said in `why_not`.
    """
    budget = ctx.settings.full_suite_budget
    support = cm.probe_coverage(ctx.argv[0], os.environ.get("PATH", os.defpath)) if budget > 0 else None
    args = cm.coverage_args(ctx.argv, support) if support is not None else None
    if support is None or args is None:
        return SuiteSearch(None, why_not="full-suite-budget is 0" if budget <= 0 else "no coverage for it")
    measured = _coverage_files(keep, scratch, py_files, support)
    seen = ctx.run(scratch, (), budget, argv=[*ctx.argv, *args], in_run_dir=measured, coverage=True)
    run = seen.run
    if run.timed_out:
        return SuiteSearch(None, why_not=f"it did not finish within full-suite-budget ({budget:g}s)")
    base = quarantine(classify(run, True, " ".join(ctx.argv)))
    if base.status != "green" or seen.foreign:
        return SuiteSearch(None, why_not=f"its run was {'broken' if seen.foreign else base.status}: "
                                         f"{seen.foreign or base.reason}")
    suite_map = cm.read_map(keep, scratch, py_files, [t.id for t in run.tests])
    if suite_map is None:
        return SuiteSearch(None, why_not="its coverage could not be read")
    return SuiteSearch(suite_map, base.tests, frozenset(base.quarantined))
