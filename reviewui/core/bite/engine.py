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
   start before it ends: nothing is reported until it has passed. Then the
   null-revert control (control.py): the revert path with nothing reverted
   must stay green, else UntrustedCommand names the tests that can tell a
   revert run from the baseline; with batched guards, one guard with nothing
   edited must not bite either. Every pytest run carries a canary test that
   must fail (canary.py): a run whose canary passes is `broken`.
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
from typing import Any, Callable

from reviewui.core.bite import control, guard_batch, guard_check, guard_tail, origin, revert_batch
from reviewui.core.bite.head_files import HeadFiles
from reviewui.core.bite.prepare import Pending, Prepared, prepare
from reviewui.core.bite.instrument import UntrustedCommand
from reviewui.core.bite.origin import changed_modules, checkout_roots, split_env_words
from reviewui.core.bite.report import Baseline, BiteReport, HunkResult
from reviewui.core.bite.revert import RevertError
from reviewui.core.bite.revert_grade import grade_revert, hunk_result
from reviewui.core.bite.runctx import RunContext
from reviewui.core.bite.selection import (
    checkable_hunks, not_code_hunks, parse_hunk_spec, selected_test_files,
    static_selection,
)
from reviewui.core.config import Settings
from reviewui.core.diff import Diff, FileDiff, Hunk
from reviewui.core.errors import ReviewError
from reviewui.core.git import list_files
from reviewui.core.run.tempdirs import private_tempdir
from reviewui.core.run import sandbox
from reviewui.core.run.runner import is_pytest_command, split_command
from reviewui.core.target import Target
from reviewui.core.run.warm_runner import WarmPytest, warm_form
from reviewui.core.run.worktree import Scratch, WorktreePool

__all__ = ["BiteCache", "UntrustedCommand", "checkable_hunks", "parse_hunk_spec", "run_bite", "selected_test_files"]


class BiteCache:
    """Baselines and instrument checks already done, keyed by head, command and selection,
    and the warm pytest servers of the session (stopped by `close()`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[tuple[object, ...], Prepared] = {}
        self._warm: dict[tuple[object, ...], WarmPytest] = {}

    def warm_server(self, python: str, settings: Settings) -> WarmPytest:
        """The warm pytest server for `python` under these settings' sandbox (started once)."""
        key = (python, tuple(settings.env_allow), settings.network)
        with self._lock:
            server = self._warm.get(key)
            if server is None:
                server = self._warm[key] = WarmPytest(python, env_allow=settings.env_allow, network=settings.network)
            return server

    def warm_servers(self) -> list[WarmPytest]:
        """The warm servers started so far (and not closed)."""
        with self._lock:
            return list(self._warm.values())

    def close(self) -> None:
        """Stop the warm servers (the cached results stay usable)."""
        with self._lock:
            servers, self._warm = list(self._warm.values()), {}
        for server in servers:
            server.close()

    def get(self, key: tuple[object, ...]) -> Prepared | None:
        with self._lock:
            return self._items.get(key)

    def put(self, key: tuple[object, ...], value: Prepared) -> None:
        with self._lock:
            self._items[key] = value


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
) -> BiteReport:
    """Bite-check the given hunks (default: every code hunk) and return the report.

    Hunks of files that are not code come back `not-code` unless
    `include_config`. Raises UntrustedCommand when the command fails the
    instrument check, ReviewError when it is unusable (unparseable, cannot be
    started) or for unknown hunks. With
    `guards`, each result also carries its guard reverts (guard_check.py).
    """
    command = test_cmd or settings.test_command
    user_env, argv = split_env_words(split_command(command))
    if not argv:
        raise ReviewError(f"the test command {command!r} sets variables but runs nothing")
    pytest_mode = is_pytest_command(argv)
    targets = checkable_hunks(diff, hunks, include_config or hunks is not None)
    config_only = [] if include_config or hunks is not None else not_code_hunks(diff)
    not_code = tuple(_result(h, "not-code", reason="not code (use --include-config to check it)")
                     for _, h in config_only)
    for r in not_code:
        if on_result:
            on_result(r)
    if not targets:
        return BiteReport(baseline=Baseline("green", reason="nothing to bite-check: no source hunk"),
                          results=not_code, selected_tests=(), test_command=command,
                          selection="nothing to bite-check: the branch changes no source code")
    tree = list_files(target.repo_dir, target.head)
    head = HeadFiles(target)
    static = static_selection(diff, tree, head.text, settings.test_layout)
    whole = all_tests or not static.files or (pytest_mode and bool(static.data_files))
    selected = () if whole else static.files
    limit = timeout or settings.timeout
    jobs = max(1, jobs or os.cpu_count() or 1)
    key = (str(target.repo_dir), target.head, tuple(argv), tuple(sorted(user_env.items())), selected,
           tuple(settings.env_allow))
    total = len(targets)
    results: dict[tuple[str, int], HunkResult] = {}

    scopes: dict[tuple[str, int], str] = {}  # where each coverage-guided hunk's tests were looked for

    def emit(r: HunkResult) -> None:
        if r.key in scopes and not r.scope:
            r = replace(r, scope=scopes[r.key])
        results[r.key] = r
        if on_result:
            on_result(r)
        if on_progress:
            on_progress(len(results), total)

    own_cache = cache is None
    if cache is None:
        cache = BiteCache()
    work = private_tempdir("bite")  # named with our pid: the next start removes it if we are killed
    modules = changed_modules([f.path for f, _ in checkable_hunks(diff) if f.status != "deleted"], tree)
    side = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="guards")
    off: str | None = None  # why batching is off, said in the report's selection note
    try:
        with WorktreePool(target.repo_dir, jobs if guards else min(jobs, max(1, total))) as pool, \
                contextlib.ExitStack() as before_close:
            # Started first, the warm server imports pytest while the baseline runs; the
            # instrument check and every hunk's run are then forks of it (cold when it cannot serve).
            warm = cache.warm_server(argv[0], settings) if settings.warm_runner and warm_form(argv) else None
            if warm is not None:
                warm.prestart([s.path for s in pool.scratches])  # one sandboxed server per slot
            # The reviewer's cancel, or a failed instrument check while the reverts already run.
            halt = _Halt(cancel)
            ctx = RunContext(argv, user_env, modules, settings, work, halt, warm, static.data_files,
                             checkout_roots(argv[0], target.repo_dir), settings.test_layout.suite_paths(tree))
            # The guards need nothing from the baseline: made meanwhile, they are ready when it is.
            made = side.submit(guard_check.guards_of, targets, head.raw) if guards else None
            prepared = cache.get(key)
            # The suite is searched for the tests of a hunk no selected test runs only when the
            # selection leaves some test module out; otherwise the selection is the suite.
            beyond = not whole and any(settings.test_layout.is_module(p) and p not in selected for p in tree)
            check_left: Pending | None = None
            if prepared is None:
                # Measure every checkable hunk's file, not just the requested ones: the cached
                # baseline serves later checks of other hunks too.
                prepared, check_left = prepare(pool, target, ctx, selected, static, checkable_hunks(diff), limit,
                                               head.text if beyond else None)
                if check_left is not None:
                    # Whatever happens next, the check's slot is not closed under it.
                    before_close.callback(_quietly, check_left)
                if check_left is None and prepared.baseline.reason != "cancelled":
                    cache.put(key, prepared)
            base = prepared.baseline
            ctx.quarantined = base.quarantined  # a cached baseline's too
            per_run = limit or (10 * base.seconds + 5)
            # Guard reverts (issue 15) run beside the hunk reverts; `join` attaches them to their hunk.
            gjobs = prepared.guard_jobs(made.result(), selected) if made is not None and base.status == "green" else []
            join = guard_check.GuardJoin(gjobs, emit)
            pending: list[tuple[FileDiff, Hunk, tuple[str, ...]]] = []
            graded_now: list[HunkResult] = []  # known without a run: reported once the instrument check passed
            for f, h in targets:
                if base.status != "green":
                    graded_now.append(_result(h, "skipped", reason=f"baseline is {base.status}: nothing can be learned"))
                    continue
                plan = prepared.plan(h, head.text(f.path), selected, whole, complete=not beyond)
                if plan.scope:
                    scopes[h.key] = plan.scope
                if plan.uncovered:
                    graded_now.append(replace(_result(h, "uncovered", reason=plan.reason), scope=plan.scope))
                else:
                    pending.append((f, h, plan.tests))

            def check(item: tuple[FileDiff, Hunk, tuple[str, ...]]) -> HunkResult:
                f, h, tests = item
                if halt.is_set():
                    return _result(h, "skipped", reason="cancelled")
                with pool.acquire() as scratch:
                    return _check_one(scratch, target, diff, f, h, ctx, tests, per_run)

            with cf.ThreadPoolExecutor(max_workers=pool.size, thread_name_prefix="bite") as ex:
                # Guards whose line runs only inside test bodies share one configured pytest
                # session per slot, and hunk reverts of Python files ride along in it; the rest
                # run one by one.
                # A pytest that moved a private name the batches lean on: every item alone, and said.
                off = warm.batching_off() if warm is not None else None
                batching = pytest_mode and off is None
                reverts, solo = revert_batch.batchable(pending) if batching else ([], pending)
                batch, alone = guard_batch.batchable(gjobs, ctx.modules, head.text) if batching else ([], gjobs)
                # A share of the guards goes to whichever session is done with its own first.
                dealt, held = guard_tail.take_tail(batch, pool.size)
                sessions, rest = revert_batch.deal(reverts, guard_batch.split(dealt, pool.size), pool.size,
                                                   lambda chunk: {g.job.guard.file for g in chunk})
                tail = guard_tail.Tail(held, len(sessions)) if held else None  # held: three quarters were dealt
                # The guard batch's own control, submitted first: a batch session of one guard with
                # nothing edited (control.py). Nothing is reported before it passed.
                null = ex.submit(control.null_guard_control, pool, target, batch[0], head.text, ctx, per_run) \
                    if batch else None
                futures: list[cf.Future[Any]] = [ex.submit(check, item) for item in [*solo, *rest]]
                for chunk, guard_chunk in sessions:
                    session = revert_batch.RevertSession(chunk, diff, per_run) if chunk else None
                    futures.append(ex.submit(guard_batch.batch_task, pool, target, guard_chunk, ctx, per_run,
                                             session, check, tail))
                futures += [ex.submit(guard_check.task, pool, target, job, ctx, per_run) for job in alone]
                if check_left is not None:
                    # The reverts started before the instrument check ended; nothing is reported
                    # until it has passed, and a failure stops what runs.
                    try:
                        check_left()
                    except BaseException:
                        halt.set()
                        raise
                    if prepared.baseline.reason != "cancelled":
                        cache.put(key, prepared)
                if null is not None:
                    try:
                        null.result()
                    except BaseException:
                        halt.set()
                        raise
                for r in graded_now:
                    join.hunk(r)
                for fut in cf.as_completed(futures):
                    done = fut.result()
                    for item in done if isinstance(done, list) else [done]:
                        join.take(item)
                # Every planned hunk and guard comes back, whatever an executor did with it.
                for _, h in targets:
                    if h.key not in results and not join.holds(h.key):
                        join.hunk(_result(h, "error", reason=LOST))
                join.finish(LOST)
    finally:
        side.shutdown(wait=True)
        if own_cache:
            cache.close()
        shutil.rmtree(work, ignore_errors=True)

    order = {h.key: n for n, (_, h) in enumerate(targets)}
    ordered = tuple(sorted(results.values(), key=lambda r: order[r.key]))
    note = prepared.note if off is None else f"{prepared.note}; {off}" if prepared.note else off
    return BiteReport(baseline=base, results=ordered + not_code, selected_tests=selected, test_command=command,
                      selection=note, guards_checked=guards, sandbox=sandbox.level())


_result = hunk_result  # the short name the sweep uses throughout

LOST = "lost by the executor"
"""The reason of a planned hunk or guard that no path of the sweep reported (a bug, never silent)."""


def _quietly(settle: Pending) -> None:
    with contextlib.suppress(BaseException):
        settle()


class _Halt(threading.Event):
    """Set by the sweep itself, or by the reviewer's own cancel event (read, never set)."""

    def __init__(self, cancel: threading.Event | None) -> None:
        super().__init__()
        self._cancel = cancel

    def is_set(self) -> bool:
        return super().is_set() or (self._cancel is not None and self._cancel.is_set())


def _check_one(
    scratch: Scratch, target: Target, diff: Diff, f: FileDiff, h: Hunk, ctx: RunContext,
    tests: tuple[str, ...], limit: float,
) -> HunkResult:
    try:
        scratch.checkout(target.head)
        path = scratch.path / f.path
        before = path.read_bytes() if path.is_file() else b""
        scratch.revert_hunk(f, h)
        after = path.read_bytes() if path.is_file() else b""
        seen = ctx.run(scratch.path, tests, limit, extra=origin.QUIET_STOP)
    except RevertError as e:
        return _result(h, "error", reason=f"revert could not be applied: {e}")
    except ReviewError as e:
        return _result(h, "error", reason=f"runner failed: {e}")
    return grade_revert(diff, f, h, seen, tests, scratch.path, before, after, ctx.pytest_mode)
