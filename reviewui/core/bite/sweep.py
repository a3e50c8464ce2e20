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
from typing import Callable, Collection, Iterable

from reviewui.core.bite import guard_check
from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.cache import BiteCache
from reviewui.core.bite.baseline import is_own
from reviewui.core.bite.caught import quarantined, settle, strip_hunk
from reviewui.core.bite.control import ControlResult
from reviewui.core.bite.guards import Guard
from reviewui.core.bite.head_files import HeadFiles
from reviewui.core.bite.origin import changed_modules, checkout_roots, split_env_words
from reviewui.core.bite import plan as planning
from reviewui.core.bite import reader_rerun
from reviewui.core.bite.plan import Batching, RevertItem, SweepPlan, plan_sweep
from reviewui.core.bite.prepare import Pending, Prepared, prepare
from reviewui.core.bite.progress import ProgressSink
from reviewui.core.bite.report import Baseline, BiteReport, HunkResult
from reviewui.core.bite.reuse import GradeBook, Grades
from reviewui.core.bite.revert_grade import hunk_result
from reviewui.core.bite.runctx import RunContext
from reviewui.core.bite.selection import checkable_hunks, not_code_hunks, static_selection
from reviewui.core.bite.source_readers import readers_by_file, regrade
from reviewui.core.config import Settings
from reviewui.core.diff import Diff
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk
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
                 on_progress: Callable[[int, int], None] | None, own_tests: Collection[str] | None = None,
                 on_tests: ProgressSink | None = None) -> None:
        self.target, self.diff, self.settings, self.spec = target, diff, settings, spec
        self.own = frozenset(own_tests or ())
        """The branch's new and changed tests (function ids): red at the head, never quarantined."""
        self.own_known = own_tests is not None
        """False when the caller did not say which tests are the branch's: then every test is (is_old)."""
        self.on_tests = on_tests
        self.pytest_mode = is_pytest_command(spec.argv)
        self.tree = list_files(target.repo_dir, target.head)
        self.head = HeadFiles(target)
        self.static = static_selection(diff, self.tree, self.head.text, settings.test_layout)
        self.whole = all_tests or not self.static.files or (self.pytest_mode and bool(self.static.data_files))
        self.selected = () if self.whole else self.static.files
        self.timeout = timeout
        self.key = (str(target.repo_dir), target.head, tuple(spec.argv), tuple(sorted(spec.user_env.items())),
                    self.selected, tuple(settings.env_allow), tuple(sorted(self.own)))
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
        self.readers: dict[str, frozenset[str]] = {}
        """Changed file -> the tests that read it as data (from the baseline, set by `plan`)."""
        self._on_result, self._on_progress = on_result, on_progress
        self._counted = False
        """True once hold() reports progress (as the runs come back, before anything is reported)."""
        self._lock = threading.Lock()
        self.book: GradeBook | None = None
        """Where each hunk's and guard's grade is kept between sweeps (reuse.py); None keeps nothing."""
        self.grades: Grades | None = None
        self.reuse_tag = ""
        """What else decides a kept grade: a witness search and its budget (a grade kept without one
        carries no witness, so a sweep that asks for witnesses never reuses it, and the reverse)."""
        self.reused: list[tuple[GuardJob, GuardResult]] = []
        """The guards whose grade this sweep reuses (their hunks' are in the plan's `known`)."""
        self.caught: dict[str, str] = {}
        """Old tests the controls caught (node id -> why): quarantined, stripped from every grade (caught.py)."""
        self._stripped: set[tuple[str, int]] = set()
        """Hunks whose grade (or a guard's) lost a caught test: not kept for a later sweep."""
        self._new_files = frozenset(f.path for f in diff.files if f.status in ("added", "renamed"))

    def emit(self, r: HunkResult) -> None:
        """Record a complete hunk result and pass it on (with the scope its tests were looked for in,
        and without the old tests the controls caught, and without the bites of tests that read its file
        as data: source_readers.py)."""
        if r.key in self.scopes and not r.scope:
            r = replace(r, scope=self.scopes[r.key])
        r = regrade(r, self.readers)
        if self.caught:
            stripped = strip_hunk(r, self.caught)
            if stripped != r:
                self._stripped.add(r.key)
            r = stripped
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
                          s.test_layout.suite_paths(self.tree), progress=self.on_tests)

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
                                           self.head.text if self.beyond else None, self.own)
            if check_left is not None:
                # Whatever happens next, the check's slot is not closed under it.
                before_close.callback(_quietly, check_left)
            else:
                self.keep(cache, prepared)
        ctx.quarantined = prepared.baseline.left_out  # a cached baseline's too
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
        self.readers = readers_by_file(base.source_readers)
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
            self.grades = Grades(self.book, self.target, self.diff, self.head, ctx, self.reuse_tag)
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
            # A grade a caught test was taken out of rests on this sweep's controls: graded again next time.
            self.grades.keep([r for r in self.results.values() if r.key not in self._stripped])

    def hold(self, results: Iterable[object], plan: SweepPlan, baseline: Baseline,
             fails_alone: Callable[[str], bool | None] = lambda _: None,
             control_alone: Callable[[planning.ControlItem], ControlResult] | None = None,
             ) -> list[HunkResult | tuple[GuardJob, GuardResult]]:
        """Every graded item of the execution, held until every control came back (their count goes
        out as progress meanwhile). Raises UntrustedCommand when a control failed on one of the
        branch's own tests or on anything but an old test, once every control came back (the
        refusal names all they failed on); old tests a control failed on are quarantined with why
        (`fails_alone` runs one alone at the head), no grade resting on them (caught.settle; a selection
        no control ran gets one more, `control_alone`, when an item failed other old tests there). An item
        whose selection no control could vouch for (its null run collected no test) comes back
        `skipped`, saying so."""
        held: list[HunkResult | tuple[GuardJob, GuardResult]] = []
        done: set[tuple[str, int]] = set()
        self._counted = True  # progress goes out from here; emit() no longer counts
        if self._on_progress:
            self._on_progress(0, len(self.spec.targets))  # the baseline is over: the graded runs have begun

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
        selections = {r.key: r.tests for s in plan.sessions for r in s.reverts if isinstance(r, RevertItem)}
        selections.update({i.key: i.tests for i in plan.alone if isinstance(i, RevertItem)})

        def selection(x: HunkResult | tuple[GuardJob, GuardResult]) -> tuple[str, ...] | None:
            return selections.get(x.key) if isinstance(x, HunkResult) else x[0].tests

        settled, self.caught = settle(held, self.controls, baseline, self.is_old, selection, fails_alone,
                                      self._follow_up(held, selection, control_alone))
        self._stripped.update(x.key if isinstance(x, HunkResult) else x[1].key
                              for x, y in zip(held, settled, strict=True) if x is not y)
        held = settled  # emit() strips the caught tests from the grades not held here too (reused, known)
        green = {c.tests for c in self.controls if c.ran and not c.no_tests}
        self.uncontrolled = {c.tests for c in self.controls if c.no_tests} - green
        if not self.uncontrolled:
            return held
        why = "no control is possible for its tests: their null-revert run collected no test"
        out: list[HunkResult | tuple[GuardJob, GuardResult]] = []
        for x in held:
            if isinstance(x, HunkResult):
                out.append(replace(x, verdict="skipped", reason=why, failing_tests=(), messages={})
                           if selection(x) in self.uncontrolled else x)
            else:
                job, res = x
                out.append((job, replace(res, verdict="skipped", reason=why, failing_tests=(), messages={}))
                           if job.tests in self.uncontrolled else x)
        return out

    def recheck_readers(self, held: list[HunkResult | tuple[GuardJob, GuardResult]],
                        run_alone: reader_rerun.RunAlone,
                        control_alone: Callable[[planning.ControlItem], ControlResult],
                        ) -> list[HunkResult | tuple[GuardJob, GuardResult]]:
        """`held` with each bite won beside a reader of its file run again without the readers
        (reader_rerun.py): what a reader read can be handed to another test."""
        if not self.readers:
            return held
        return reader_rerun.without_readers(held, self.readers, self.spec.targets, run_alone, control_alone)

    def _follow_up(self, held: list[HunkResult | tuple[GuardJob, GuardResult]],
                   selection: Callable[[HunkResult | tuple[GuardJob, GuardResult]], tuple[str, ...] | None],
                   control_alone: Callable[[planning.ControlItem], ControlResult] | None,
                   ) -> Callable[[tuple[str, ...]], ControlResult | None] | None:
        """One more control of a selection, run alone as a revert of the first held item that ran it
        (its file rewritten with its own bytes); None without a runner."""
        if control_alone is None:
            return None
        files = {f.path: f for f, _ in self.spec.targets}
        file_of: dict[tuple[str, ...], FileDiff] = {}
        for x in held:
            tests = selection(x)
            f = files.get(x.file if isinstance(x, HunkResult) else x[0].guard.file)
            if tests is not None and f is not None:
                file_of.setdefault(tests, f)

        def run(tests: tuple[str, ...]) -> ControlResult | None:
            f = file_of.get(tests)
            return None if f is None else control_alone(planning.ControlItem(f, tests, "revert"))

        return run

    def is_old(self, test: str) -> bool:
        """True when `test` (a node id) is an old test: its file is one the base has, and the branch
        neither added nor changed it (not known which tests are the branch's: no test is old)."""
        return (self.own_known and not is_own(test, self.own)
                and test.split("::", 1)[0] not in self._new_files)

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
        baseline = quarantined(prepared.baseline, self.caught) if self.caught else prepared.baseline
        return BiteReport(baseline=baseline, results=ordered + self.spec.not_code,
                          selected_tests=self.selected, test_command=self.spec.command, selection=note,
                          guards_checked=guards, sandbox=sandbox.level(), selection_is_suite=not self.beyond,
                          controls=sum(c.ran for c in self.controls))


def _quietly(settle: Pending) -> None:
    with contextlib.suppress(BaseException):
        settle()
