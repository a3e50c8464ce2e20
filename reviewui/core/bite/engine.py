"""Bite-checks: revert one hunk in a scratch worktree, rerun the tests, grade the result.

`run_bite(target, diff, settings, ...)` is the entry point for the UI (`b`,
`B`) and for `reviewui bite`. The steps, each chosen so the evidence cannot lie:

1. Baseline: the selected tests (test files the branch added or changed, or
   the whole suite with `all_tests`) at the unmodified head. Not green means
   every hunk is `skipped`. For `<python> -m pytest` with coverage installed
   in that Python the baseline also records which test executes which
   changed line (`coverage_map`).
2. Instrument check, once: pytest must report a throw-away, always-failing
   test placed beside the selected tests as failed (and exit non-zero). Any
   other command must exit non-zero when every changed source file is
   replaced by garbage; a command that cannot fail is refused with a
   ReviewError instead of calling every hunk toothless.
3. Per source hunk (role `source`, or `other` with a code-like file; never
   test hunks, binary or mode-only changes): `uncovered` straight from the
   coverage map, or revert only that hunk in a scratch, run the tests that
   execute it, and grade (`bite_grade`). Hunks run in parallel, one scratch
   worktree per job; results stream through `on_result` / `on_progress`; the
   `cancel` event kills running process groups promptly.

Pass a `BiteCache` (one per review session) to reuse the baseline and the
instrument check across `b` presses on the same head.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Callable

from reviewui.core.bite import coverage_map as cm
from reviewui.core.bite.grade import defined_names, grade_exit_code, grade_pytest
from reviewui.core.bite.report import Baseline, BiteReport, HunkResult
from reviewui.core.config import Settings
from reviewui.core.diff import Diff, FileDiff, Hunk
from reviewui.core.errors import ReviewError
from reviewui.core.git import list_files, show_file
from reviewui.core.bite.revert import RevertError
from reviewui.core.run.runner import RunResult, is_pytest_command, run_tests, split_command
from reviewui.core.target import Target
from reviewui.core.run.warm_runner import WarmPytest, warm_form
from reviewui.core.run.worktree import Scratch, WorktreePool

SELECTED_TEST_GLOBS = ("test_*.py", "*_test.py")
CODE_LIKE_OTHER = frozenset({".toml", ".cfg", ".ini", ".json", ".yaml", ".yml", ".html", ".css", ".j2", ".jinja",
                             ".tmpl", ".xml", ".env", ".properties", ".mk"})
CODE_LIKE_NAMES = frozenset({"Makefile", "Dockerfile", "Justfile", "Rakefile", "Gemfile"})
INSTRUMENT_TEST = 'def test_reviewui_instrument():\n    assert False, "reviewui instrument check: this test must fail"\n'
GARBAGE = b")(}{ reviewui instrument check: this file is deliberately broken ][\n"


def selected_test_files(diff: Diff) -> list[str]:
    """Test files the branch added or changed (test_*.py / *_test.py, not deleted, not conftest)."""
    return [
        f.path
        for f in diff.files
        if f.role == "test" and f.status != "deleted" and not f.binary
        and any(fnmatchcase(PurePosixPath(f.path).name, g) for g in SELECTED_TEST_GLOBS)
    ]


def is_revertible(f: FileDiff) -> bool:
    """True for files whose hunks are bite-checked: source, or code-like `other`; text only."""
    if f.binary or not f.hunks:
        return False
    if f.role == "source":
        return True
    p = PurePosixPath(f.path)
    return f.role == "other" and (p.suffix.lower() in CODE_LIKE_OTHER or p.name in CODE_LIKE_NAMES)


def checkable_hunks(diff: Diff, wanted: list[tuple[str, int]] | None = None) -> list[tuple[FileDiff, Hunk]]:
    """The hunks a sweep checks, or just `wanted` ones. Raises ReviewError for unknown/test hunks."""
    if wanted is None:
        return [(f, h) for f in diff.files if is_revertible(f) for h in f.hunks]
    out: list[tuple[FileDiff, Hunk]] = []
    for path, index in wanted:
        f = diff.file(path)
        if f is None:
            raise ReviewError(f"{path} is not changed on this branch")
        if not 0 <= index < len(f.hunks):
            raise ReviewError(f"{path} has no hunk {index + 1} (it has {len(f.hunks)})")
        if not is_revertible(f):
            raise ReviewError(f"{path} is a {f.role} file: only source hunks are bite-checked")
        out.append((f, f.hunks[index]))
    return out


def parse_hunk_spec(spec: str, diff: Diff) -> list[tuple[str, int]]:
    """Parse `--hunk FILE[:N]` into (file, 0-based index) pairs (all hunks of FILE without N).

    N is the hunk's number as people count, from 1 (what the text output shows).
    Raises ReviewError for an unknown file or a number the file has no hunk for.
    """
    path, sep, idx = spec.rpartition(":")
    if not sep or not idx.isdigit() or diff.file(spec) is not None:
        path, idx = spec, ""
    f = diff.file(path)
    if f is None:
        raise ReviewError(f"--hunk: {path} is not changed on this branch")
    if idx:
        return [(f.path, hunk_number_to_index(path, int(idx), len(f.hunks)))]
    return [(f.path, h.index) for h in f.hunks]


def hunk_number_to_index(path: str, number: int, count: int) -> int:
    """The 0-based index of hunk `number` (1-based) of `path`, which has `count` hunks.

    Raises ReviewError naming the valid range.
    """
    if not 1 <= number <= count:
        raise ReviewError(f"--hunk: {path} has no hunk {number} (its hunks are numbered 1 to {count})")
    return number - 1


@dataclass(frozen=True)
class _Prepared:
    baseline: Baseline
    cov: cm.CoverageMap | None


class BiteCache:
    """Baselines and instrument checks already done, keyed by head, command and selection,
    and the warm pytest servers of the session (stopped by `close()`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[tuple[object, ...], _Prepared] = {}
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

    def get(self, key: tuple[object, ...]) -> _Prepared | None:
        with self._lock:
            return self._items.get(key)

    def put(self, key: tuple[object, ...], value: _Prepared) -> None:
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
) -> BiteReport:
    """Bite-check the given hunks (default: every source hunk) and return the report.

    Raises ReviewError when the command is unusable (unparseable, cannot be
    started, fails the instrument check), when nothing selects tests (pytest
    without test changes: pass all_tests), or for unknown hunks.
    """
    command = test_cmd or settings.test_command
    argv = split_command(command)
    pytest_mode = is_pytest_command(argv)
    selected = () if all_tests else tuple(selected_test_files(diff))
    if pytest_mode and not selected and not all_tests:
        raise ReviewError("the branch adds or changes no test files (test_*.py, *_test.py); use --all-tests")
    targets = checkable_hunks(diff, hunks)
    limit = timeout or settings.timeout
    jobs = max(1, jobs or os.cpu_count() or 1)
    key = (str(target.repo_dir), target.head, tuple(argv), selected, tuple(settings.env_allow))
    total = len(targets)
    results: dict[tuple[str, int], HunkResult] = {}

    def emit(r: HunkResult) -> None:
        results[r.key] = r
        if on_result:
            on_result(r)
        if on_progress:
            on_progress(len(results), total)

    own_cache = cache is None
    if cache is None:
        cache = BiteCache()
    try:
        with WorktreePool(target.repo_dir, min(jobs, max(1, total))) as pool:
            # Started first, the warm server imports pytest while the baseline runs; the
            # instrument check and every hunk's run are then forks of it (cold when it cannot serve).
            warm = cache.warm_server(argv[0], settings) if settings.warm_runner and warm_form(argv) else None
            prepared = cache.get(key)
            if prepared is None:
                # Measure every checkable hunk's file, not just the requested ones: the cached
                # baseline serves later checks of other hunks too.
                prepared = _prepare(pool, target, argv, selected, checkable_hunks(diff), settings, limit, cancel, warm)
                if prepared.baseline.reason != "cancelled":
                    cache.put(key, prepared)
            base = prepared.baseline
            per_run = limit or (10 * base.seconds + 5)
            pending: list[tuple[FileDiff, Hunk, tuple[str, ...]]] = []
            for f, h in targets:
                if base.status != "green":
                    emit(_result(h, "skipped", reason=f"baseline is {base.status}: nothing can be learned"))
                    continue
                sel = _selection(prepared, target, f, h, selected)
                if sel.choice == "uncovered":
                    emit(_result(h, "uncovered", reason=sel.reason))
                else:
                    pending.append((f, h, sel.tests if sel.choice == "tests" else selected))

            def check(item: tuple[FileDiff, Hunk, tuple[str, ...]]) -> HunkResult:
                f, h, tests = item
                if cancel is not None and cancel.is_set():
                    return _result(h, "skipped", reason="cancelled")
                with pool.acquire() as scratch:
                    return _check_one(scratch, target, f, h, argv, tests, per_run, settings, cancel, pytest_mode, warm)

            with cf.ThreadPoolExecutor(max_workers=pool.size, thread_name_prefix="bite") as ex:
                for fut in cf.as_completed([ex.submit(check, item) for item in pending]):
                    emit(fut.result())
    finally:
        if own_cache:
            cache.close()

    order = {h.key: n for n, (_, h) in enumerate(targets)}
    ordered = tuple(sorted(results.values(), key=lambda r: order[r.key]))
    return BiteReport(baseline=base, results=ordered, selected_tests=selected, test_command=command)


def _result(h: Hunk, verdict: str, **kw: object) -> HunkResult:
    return HunkResult(file=h.file, index=h.index, header=h.header, text=h.text, verdict=verdict, **kw)  # type: ignore[arg-type]


def _selection(prepared: _Prepared, target: Target, f: FileDiff, h: Hunk, selected: tuple[str, ...]) -> cm.Selection:
    if prepared.cov is None:
        return cm.Selection("all")
    raw = show_file(target.repo_dir, target.head, f.path)
    return prepared.cov.select(h, None if raw is None else raw.decode("utf-8", "replace"))


def _check_one(
    scratch: Scratch, target: Target, f: FileDiff, h: Hunk, argv: list[str], tests: tuple[str, ...],
    limit: float, settings: Settings, cancel: threading.Event | None, pytest_mode: bool,
    warm: WarmPytest | None = None,
) -> HunkResult:
    try:
        scratch.checkout(target.head)
        scratch.revert_hunk(f, h)
        run = run_tests(scratch.path, argv, tests, limit, env_allow=settings.env_allow,
                        network=settings.network, cancel=cancel, warm=warm)
    except RevertError as e:
        return _result(h, "error", reason=f"revert could not be applied: {e}")
    except ReviewError as e:
        return _result(h, "error", reason=f"runner failed: {e}")
    g = grade_pytest(run, defined_names(f, h)) if pytest_mode else grade_exit_code(run)
    # Say `coder/history.py`, not the scratch worktree's absolute path under the cache dir.
    root = str(scratch.path).rstrip("/") + "/"

    def rel(text: str) -> str:
        return text.replace(root, "")

    return _result(
        h, g.verdict, failing_tests=g.failing_tests, messages={k: rel(v) for k, v in g.messages.items()},
        reason=rel(g.reason), seconds=run.seconds, output=rel(run.output), tests_run=tests,
    )


def _prepare(
    pool: WorktreePool, target: Target, argv: list[str], selected: tuple[str, ...],
    targets: list[tuple[FileDiff, Hunk]], settings: Settings, limit: float | None, cancel: threading.Event | None,
    warm: WarmPytest | None = None,
) -> _Prepared:
    pytest_mode = is_pytest_command(argv)
    baseline_limit = max(60.0, 3 * limit) if limit else 600.0
    py_files = sorted({f.path for f, _ in targets if f.path.endswith(".py") and f.status != "deleted"})
    work = Path(tempfile.mkdtemp(prefix="reviewui-cov-"))
    try:
        with pool.acquire() as scratch:
            scratch.checkout(target.head)
            run_argv, extra, support = list(argv), None, None
            if pytest_mode and py_files:
                support = cm.probe_coverage(argv[0], os.environ.get("PATH", os.defpath))
                cov_argv = cm.coverage_argv(argv, work / "rcfile") if support else None
                if support and cov_argv:
                    extra = cm.prepare(work, scratch.path, py_files, support)
                    run_argv = cov_argv
            run = run_tests(scratch.path, run_argv, selected, baseline_limit,
                            env_allow=settings.env_allow, network=settings.network, extra_env=extra,
                            cancel=cancel)
            baseline = _baseline(run, pytest_mode)
            cov = None
            if baseline.status == "green" and extra is not None:
                cov = cm.read_map(work, scratch.path, py_files, baseline.tests)
            if cov is not None:
                baseline = replace(baseline, coverage_guided=True)
            if baseline.status == "green":
                _instrument_check(scratch, target, argv, selected, targets, settings, baseline_limit, cancel, warm)
            return _Prepared(baseline, cov)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _baseline(run: RunResult, pytest_mode: bool) -> Baseline:
    common = {"seconds": run.seconds, "output": run.output, "tests": tuple(t.id for t in run.tests)}
    if run.cancelled:
        return Baseline("broken", reason="cancelled", **common)
    if run.timed_out:
        return Baseline("timeout", reason=f"killed after {run.seconds:.1f}s", **common)
    if not pytest_mode:
        if run.returncode == 0:
            return Baseline("green", **common)
        return Baseline("red", reason=f"exit code {run.returncode}", **common)
    collection = [t for t in run.tests if t.collection]
    if run.returncode in (2, 3, 4, 5) or collection or run.junit_error:
        why = collection[0].message if collection else (run.junit_error or f"pytest exit code {run.returncode}")
        return Baseline("broken", reason=why, **common)
    failing = run.failing
    if failing:
        return Baseline("red", tuple(t.id for t in failing), {t.id: t.message for t in failing},
                        reason=f"{len(failing)} selected test(s) fail at the branch head", **common)
    if run.returncode != 0:
        return Baseline("broken", reason=f"exit code {run.returncode} but no failing test reported", **common)
    return Baseline("green", **common)


def _instrument_check(
    scratch: Scratch, target: Target, argv: list[str], selected: tuple[str, ...],
    targets: list[tuple[FileDiff, Hunk]], settings: Settings, limit: float, cancel: threading.Event | None,
    warm: WarmPytest | None = None,
) -> None:
    """Raise ReviewError unless the command demonstrably reports a failure (the warm runner included)."""
    scratch.reset()
    try:
        if is_pytest_command(argv):
            folder = _test_folder(target, selected)
            rel = f"{folder}/test_reviewui_instrument_{os.getpid()}.py".lstrip("/")
            scratch.add_file(rel, INSTRUMENT_TEST)
            run = run_tests(scratch.path, argv, [rel], limit, env_allow=settings.env_allow,
                            network=settings.network, cancel=cancel, warm=warm)
            node = f"{rel}::test_reviewui_instrument"
            seen = {t.id: t.outcome for t in run.tests}
            if run.killed:
                return
            if run.returncode == 0 or seen.get(node) != "failed":
                what = seen.get(node, "not reported at all")
                raise ReviewError(
                    f"the test command cannot be trusted: a deliberately failing test ({node}) was "
                    f"{what} with exit code {run.returncode}; check --test-cmd"
                )
            return
        files = sorted({f.path for f, _ in targets if f.status != "deleted"})
        if not files:
            return
        for path in files:
            scratch.add_file(path, GARBAGE)
        run = run_tests(scratch.path, argv, selected, limit, env_allow=settings.env_allow,
                        network=settings.network, cancel=cancel)
        if run.returncode == 0:
            raise ReviewError(
                "the test command cannot be trusted: it still exits 0 with every changed source file "
                "replaced by garbage (it cannot fail, or does not exercise the change); check --test-cmd"
            )
    finally:
        scratch.reset()


def _test_folder(target: Target, selected: tuple[str, ...]) -> str:
    """Where the instrument test goes: beside the first selected test, else beside any test."""
    candidates = list(selected) or [
        p for p in list_files(target.repo_dir, target.head)
        if any(fnmatchcase(PurePosixPath(p).name, g) for g in SELECTED_TEST_GLOBS)
    ]
    if not candidates:
        return ""
    parent = str(PurePosixPath(candidates[0]).parent)
    return "" if parent == "." else parent
