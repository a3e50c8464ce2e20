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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from reviewui.core.bite import coverage_map as cm
from reviewui.core.bite.baseline import classify
from reviewui.core.bite.control import control_tests, null_revert_control
from reviewui.core.bite.canary import TAMPERED
from reviewui.core.bite.instrument import UntrustedCommand, instrument_check, side_checks
from reviewui.core.bite.report import Baseline
from reviewui.core.bite.runctx import RunContext
from reviewui.core.bite.selection import StaticSelection, selection_note
from reviewui.core.diff import FileDiff, Hunk
from reviewui.core.run.runner import RunFiles
from reviewui.core.run.worktree import Scratch, WorktreePool
from reviewui.core.target import Target


@dataclass(frozen=True)
class Prepared:
    """What every revert of a sweep needs from the baseline (cached across `b` presses)."""

    baseline: Baseline
    cov: cm.CoverageMap | None
    chosen: tuple[str, ...] = ()
    """Node ids chosen beyond coverage: tests in statically selected files and readers of changed data."""
    note: str = ""
    """How many tests were selected and why."""


Pending = Callable[[], None]
"""The instrument check still running: returns once it passed, raises UntrustedCommand if not."""


def prepare(
    pool: WorktreePool, target: Target, ctx: RunContext, selected: tuple[str, ...], static: StaticSelection,
    targets: list[tuple[FileDiff, Hunk]], limit: float | None,
) -> tuple[Prepared, Pending | None]:
    """Run the baseline and the instrument check: (what the reverts need, the check if it is
    still running). Raises UntrustedCommand when the check has already failed."""
    # --timeout bounds every run, the baseline included (it runs under coverage, so give it room with --timeout).
    baseline_limit = limit if limit else 600.0
    # The instrument check needs nothing from the baseline: with a second slot it runs there
    # meanwhile (pytest's half, then garbage in every changed module), and its verdict is read
    # once the baseline is green.
    early: cf.Future[bool | None] | None = None
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
                            lambda s: side_checks(s, target, ctx, selected, baseline_limit, fresh=s is other))
    pending: Pending | None = None
    try:
        prepared, pending = _prepare_in_slot(pool, target, ctx, selected, static, targets, baseline_limit, early,
                                             first)
        return prepared, pending
    finally:
        if side is not None:
            # Its slot is back in the pool once the check ends; a pending check ends it itself.
            side.shutdown(wait=pending is None)


def _coverage_files(keep: Path, scratch: Path, py_files: list[str], support: cm.CoverageSupport) -> RunFiles:
    """The rcfile and plugin of a measured run, written into the run's own directory (the one
    place a warm fork and a sandboxed cold run both see), its data copied to `keep` after."""

    def setup(run_dir: Path) -> dict[str, str]:
        return cm.prepare(run_dir / "cov", scratch, py_files, support)

    def collect(run_dir: Path) -> None:
        if (run_dir / "cov").is_dir():
            shutil.copytree(run_dir / "cov", keep, dirs_exist_ok=True)

    return RunFiles(setup, collect)


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
    first: Scratch | None = None,
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
                       in_run_dir=measured, coverage=measured is not None)
        baseline = classify(seen.run, ctx.pytest_mode, " ".join(ctx.argv))
        if seen.foreign and seen.foreign.startswith(TAMPERED):
            # The baseline's canary passed: no run of this command can be believed (canary.py).
            raise UntrustedCommand(f"the test command cannot be trusted: {seen.foreign}; check the branch's "
                                   "conftest files and plugins")
        if seen.foreign and baseline.status == "green":
            baseline = replace(baseline, status="broken", reason=seen.foreign)
        cov, note = None, ""
        if baseline.status == "green" and measured is not None:
            cov = cm.read_map(cov_dir, scratch.path, py_files, baseline.tests)
            if cov is not None and (blind := cov.blind_to(ctx.modules, seen.observed.modules)):
                cov, note = None, (f"; coverage map not trusted ({blind} was imported but no line of it was "
                                   "recorded): every hunk is reverted")
        if cov is not None:
            baseline = replace(baseline, coverage_guided=True)
        pending: Pending | None = None
        if baseline.status == "green":
            # Before anything is graded: nothing reverted, the revert path must stay green (control.py),
            # its tests named as a coverage-guided revert names them (node ids), else as the baseline did.
            # A whole-suite run lets the instrument check's garbage run on its own, and so the control.
            null_revert_control(scratch, target, ctx, control_tests(baseline, cov is not None, selected), targets,
                                baseline, baseline_limit, batch=bool(selected))
            imported = [m for m in ctx.modules if m.name in seen.observed.modules]
            if early is not None:
                # Both halves ran beside the baseline (instrument.side_checks): only their verdict
                # is left to read, and nothing of it needs this slot.
                def pending() -> None:
                    instrument_check(scratch, target, ctx, selected, targets, baseline_limit, imported,
                                     pytest_checked=True, garbage_passed=early.result())  # raises UntrustedCommand
                if early.done():
                    pending()  # already decided: no need to carry it
                    pending = None
            else:
                instrument_check(scratch, target, ctx, selected, targets, baseline_limit, imported)
        openers = tuple(sorted({t for ts in seen.observed.opens.values() for t in ts}))
        in_files = tuple(t for t in baseline.tests if t.split("::", 1)[0] in static.files) if selected == () else ()
        chosen = tuple(dict.fromkeys([*in_files, *openers]))
        note = selection_note(static, selected, baseline.tests, openers, cov) + note
        return Prepared(baseline, cov, chosen, note), pending
