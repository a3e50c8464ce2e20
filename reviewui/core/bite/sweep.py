"""One bite sweep's steps, in the order run_bite (engine.py) takes them: prepare, plan, then report.

`_Spec` is what the request asks for (the command, the hunks, those that are
not code); `Sweep` holds what one sweep learns as it goes (the static
selection, the cache key, the results so far) and does each step that is
not the executor's: the run context, the baseline (cached per head and
command), the plan, the completeness check and the report.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, replace
from typing import Callable, Iterable

from reviewui.core.bite import guard_check
from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.cache import BiteCache
from reviewui.core.bite.control import ControlResult, refusal
from reviewui.core.bite.guards import Guard
from reviewui.core.bite.head_files import HeadFiles
from reviewui.core.bite.origin import changed_modules, checkout_roots, split_env_words
from reviewui.core.bite import plan as planning
from reviewui.core.bite.plan import Batching, RevertItem, SweepPlan, plan_sweep
from reviewui.core.bite.prepare import Pending, Prepared, prepare
from reviewui.core.bite.report import BiteReport, HunkResult
from reviewui.core.bite.reuse import GradeBook, Grades
from reviewui.core.bite.revert_grade import hunk_result
from reviewui.core.bite.runctx import RunContext
from reviewui.core.bite.selection import checkable_hunks, not_code_hunks, static_selection
from reviewui.core.config import Settings
from reviewui.core.diff import Diff, FileDiff, Hunk
from reviewui.core.errors import ReviewError
from reviewui.core.git import list_files
from reviewui.core.run import sandbox
from reviewui.core.run.runner import is_pytest_command, split_command
from reviewui.core.run.tempdirs import private_tempdir
from reviewui.core.run.warm_runner import warm_form
from reviewui.core.run.worktree import WorktreePool
from reviewui.core.target import Target

LOST = "lost by the executor"
"""The reason of a planned hunk or guard that no path of the sweep reported (a bug, never silent)."""


@dataclass(frozen=True)
class Spec:
    """What a bite request asks for."""

    command: str
    argv: list[str]
    user_env: dict[str, str]
    targets: list[tuple[FileDiff, Hunk]]
    """The hunks to grade, in diff order."""
    not_code: tuple[HunkResult, ...]
    """Hunks of files that are not code, graded `not-code` without a run."""

    @staticmethod
    def of(diff: Diff, settings: Settings, test_cmd: str | None, hunks: list[tuple[str, int]] | None,
           include_config: bool) -> Spec:
        """The request's spec; ReviewError for a command that runs nothing, or for unknown hunks."""
        command = test_cmd or settings.test_command
        user_env, argv = split_env_words(split_command(command))
        if not argv:
            raise ReviewError(f"the test command {command!r} sets variables but runs nothing")
        targets = checkable_hunks(diff, hunks, include_config or hunks is not None)
        config_only = [] if include_config or hunks is not None else not_code_hunks(diff)
        not_code = tuple(hunk_result(h, "not-code", reason="not code (use --include-config to check it)")
                         for _, h in config_only)
        return Spec(command, argv, user_env, targets, not_code)


class Sweep:
    """One sweep's state and its steps besides the executor's (see the module docstring)."""

    def __init__(self, target: Target, diff: Diff, settings: Settings, spec: Spec, all_tests: bool,
                 timeout: float | None, on_result: Callable[[HunkResult], None] | None,
                 on_progress: Callable[[int, int], None] | None) -> None:
        self.target, self.diff, self.settings, self.spec = target, diff, settings, spec
        self.pytest_mode = is_pytest_command(spec.argv)
        self.tree = list_files(target.repo_dir, target.head)
        self.head = HeadFiles(target)
        self.static = static_selection(diff, self.tree, self.head.text, settings.test_layout)
        self.whole = all_tests or not self.static.files or (self.pytest_mode and bool(self.static.data_files))
        self.selected = () if self.whole else self.static.files
        self.timeout = timeout
        self.key = (str(target.repo_dir), target.head, tuple(spec.argv), tuple(sorted(spec.user_env.items())),
                    self.selected, tuple(settings.env_allow))
        # The suite is searched for the tests of a hunk no selected test runs only when the
        # selection leaves some test module out; otherwise the selection is the suite.
        self.beyond = not self.whole and any(settings.test_layout.is_module(p) and p not in self.selected
                                             for p in self.tree)
        self.work = private_tempdir("bite")  # named with our pid: the next start removes it if we are killed
        self.results: dict[tuple[str, int], HunkResult] = {}
        self.scopes: dict[tuple[str, int], str] = {}
        self.controls: list[ControlResult] = []
        """Every control that came back (control.py)."""
        self.uncontrolled: set[tuple[str, ...]] = set()
        """Selections no control could vouch for (their null run collected no test)."""
        self._on_result, self._on_progress = on_result, on_progress
        self._counted = False
        """True once hold() reports progress (as the runs come back, before anything is reported)."""
        self._lock = threading.Lock()
        self.book: GradeBook | None = None
        """Where each hunk's and guard's grade is kept between sweeps (reuse.py); None keeps nothing."""
        self.grades: Grades | None = None
        self.reused: list[tuple[GuardJob, GuardResult]] = []
        """The guards whose grade this sweep reuses (their hunks' are in the plan's `known`)."""

    def emit(self, r: HunkResult) -> None:
        """Record a complete hunk result and pass it on (with the scope its tests were looked for in)."""
        if r.key in self.scopes and not r.scope:
            r = replace(r, scope=self.scopes[r.key])
        with self._lock:
            self.results[r.key] = r
            done = len(self.results)
        if self._on_result:
            self._on_result(r)
        if self._on_progress and not self._counted:
            self._on_progress(done, len(self.spec.targets))

    def context(self, pool: WorktreePool, cache: BiteCache, halt: threading.Event) -> RunContext:
        """How every run of this sweep is made; starts the slots' warm servers first, so they
        import pytest while the baseline runs."""
        s = self.settings
        warm = cache.warm_server(self.spec.argv[0], s) if s.warm_runner and warm_form(self.spec.argv) else None
        if warm is not None:
            warm.prestart([sc.path for sc in pool.scratches])  # one sandboxed server per slot
        modules = changed_modules([f.path for f, _ in checkable_hunks(self.diff) if f.status != "deleted"],
                                  self.tree)
        return RunContext(self.spec.argv, self.spec.user_env, modules, s, self.work, halt, warm,
                          self.static.data_files, checkout_roots(self.spec.argv[0], self.target.repo_dir),
                          s.test_layout.suite_paths(self.tree))

    def prepare(self, pool: WorktreePool, ctx: RunContext, cache: BiteCache,
                before_close: contextlib.ExitStack) -> tuple[Prepared, Pending | None]:
        """The baseline and instrument check (cached per head and command), and the check still
        running, if any: it must pass before anything is reported."""
        prepared = cache.get(self.key)
        check_left: Pending | None = None
        if prepared is None:
            # Measure every checkable hunk's file, not just the requested ones: the cached
            # baseline serves later checks of other hunks too.
            prepared, check_left = prepare(pool, self.target, ctx, self.selected, self.static,
                                           checkable_hunks(self.diff), self.timeout,
                                           self.head.text if self.beyond else None)
            if check_left is not None:
                # Whatever happens next, the check's slot is not closed under it.
                before_close.callback(_quietly, check_left)
            else:
                self.keep(cache, prepared)
        ctx.quarantined = prepared.baseline.quarantined  # a cached baseline's too
        return prepared, check_left

    def keep(self, cache: BiteCache, prepared: Prepared) -> None:
        """Cache a settled baseline for the next sweep on this head (never a cancelled one)."""
        if prepared.baseline.reason != "cancelled":
            cache.put(self.key, prepared)

    def plan(self, prepared: Prepared, guards: list[Guard], ctx: RunContext, slots: int,
             share: float | None = None) -> SweepPlan:
        """The sweep's plan from the baseline (plan.plan_sweep); `share`: the work a session gets at
        least (None: plan.SESSION_SHARE, this machine's cores; an executor on other machines says 0)."""
        base = prepared.baseline
        # A pytest that moved a private name the batches lean on: every item alone, and said.
        off = ctx.warm.batching_off() if ctx.warm is not None else None
        if base.status != "green":
            skipped = plan_sweep(self.spec.targets, f"baseline is {base.status}: nothing can be learned", [],
                                 slots=slots, batching=None)
            return replace(skipped, batching_off=off)
        hunk_plans = {h.key: prepared.plan(h, self.head.text(f.path), self.selected, self.whole,
                                           complete=not self.beyond) for f, h in self.spec.targets}
        jobs = prepared.guard_jobs(guards, self.selected) if guards else []
        batching: Batching | str | None = (None if not self.pytest_mode else off if off is not None
                                           else Batching(ctx.modules, self.head.text))
        targets, hunks = self.spec.targets, list[HunkResult]()
        if self.book is not None:  # what an earlier sweep graded, unchanged since, is reused, not run
            self.grades = Grades(self.book, self.target, self.diff, self.head, ctx)
            targets, jobs, hunks, self.reused = self.grades.split(targets, hunk_plans, jobs)
        planned = plan_sweep(targets, hunk_plans, jobs, slots=slots, batching=batching,
                             share=planning.SESSION_SHARE if share is None else share)
        self.scopes.update(planned.scopes)
        return replace(planned, known=planned.known + tuple(hunks)) if hunks else planned

    def join_jobs(self, plan: SweepPlan) -> list[GuardJob]:
        """Every guard the join waits for: the plan's and those reused."""
        return plan.guard_jobs() + [job for job, _ in self.reused]

    def keep_grades(self) -> None:
        """Keep what this sweep graded afresh for the next one (reuse.py)."""
        if self.grades is not None:
            self.grades.keep(list(self.results.values()))

    def hold(self, results: Iterable[object], plan: SweepPlan) -> list[HunkResult | tuple[GuardJob, GuardResult]]:
        """Every graded item of the execution, held until every control came back (their count goes
        out as progress meanwhile). Raises UntrustedCommand when a control failed, once every
        control came back (the refusal names all they failed on); an item whose selection no control could vouch for (its null run
        collected no test) comes back `skipped`, saying so."""
        held: list[HunkResult | tuple[GuardJob, GuardResult]] = []
        done: set[tuple[str, int]] = set()
        self._counted = True  # progress goes out from here; emit() no longer counts

        def count(key: tuple[str, int]) -> None:
            if key not in done:
                done.add(key)
                if self._on_progress:
                    self._on_progress(len(done), len(self.spec.targets))

        for r in plan.known:
            count(r.key)
        for item in results:
            if isinstance(item, ControlResult):
                self.controls.append(item)
                continue
            if isinstance(item, HunkResult):
                count(item.key)
            held.append(item)  # type: ignore[arg-type]  # the executor's Result, less the controls
        refused = refusal(self.controls)
        if refused is not None:
            raise refused
        green = {c.tests for c in self.controls if c.ran and not c.no_tests}
        self.uncontrolled = {c.tests for c in self.controls if c.no_tests} - green
        if not self.uncontrolled:
            return held
        tests = {r.key: r.tests for s in plan.sessions for r in s.reverts if isinstance(r, RevertItem)}
        tests.update({i.key: i.tests for i in plan.alone if isinstance(i, RevertItem)})
        why = "no control is possible for its tests: their null-revert run collected no test"
        out: list[HunkResult | tuple[GuardJob, GuardResult]] = []
        for x in held:
            if isinstance(x, HunkResult):
                out.append(replace(x, verdict="skipped", reason=why, failing_tests=(), messages={})
                           if tests.get(x.key) in self.uncontrolled else x)
            else:
                job, res = x
                out.append((job, replace(res, verdict="skipped", reason=why, failing_tests=(), messages={}))
                           if job.tests in self.uncontrolled else x)
        return out

    def per_run(self, prepared: Prepared) -> float:
        """Seconds one revert or guard run may take."""
        return self.timeout or (10 * prepared.baseline.seconds + 5)

    def complete(self, join: guard_check.GuardJoin) -> None:
        """Grade `error` ("lost by the executor") every planned hunk and guard no executor reported."""
        for _, h in self.spec.targets:
            with self._lock:
                reported = h.key in self.results
            if not reported and not join.holds(h.key):
                join.hunk(hunk_result(h, "error", reason=LOST))
        join.finish(LOST)

    def report(self, prepared: Prepared, plan: SweepPlan, guards: bool) -> BiteReport:
        """The sweep's report, hunks in diff order, then those not code."""
        order = {h.key: n for n, (_, h) in enumerate(self.spec.targets)}
        ordered = tuple(sorted(self.results.values(), key=lambda r: order[r.key]))
        off = plan.batching_off
        note = prepared.note if off is None else f"{prepared.note}; {off}" if prepared.note else off
        if self.uncontrolled:
            said = (f"no control is possible for {len(self.uncontrolled)} test selection(s) (their null-revert "
                    "run collected no test): their hunks and guards are not graded")
            note = f"{note}; {said}" if note else said
        return BiteReport(baseline=prepared.baseline, results=ordered + self.spec.not_code,
                          selected_tests=self.selected, test_command=self.spec.command, selection=note,
                          guards_checked=guards, sandbox=sandbox.level(),
                          controls=sum(c.ran for c in self.controls))


def _quietly(settle: Pending) -> None:
    with contextlib.suppress(BaseException):
        settle()
