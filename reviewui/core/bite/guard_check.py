"""Run guard reverts through the bite machinery and attach them to their hunk's result.

Each guard (see guards.py) is graded exactly like a hunk revert: the same
scratch worktrees, sandboxed runner and warm pytest server, the same grading
(`grade_pytest` with the names the edit unbinds excused, or the exit code),
and coverage-guided selection: only the tests whose call phase executed the
guard's line run, and a guard on a line no selected test executes is
`uncovered` without running anything. engine.run_bite calls in here when
asked for guards; `GuardJoin` holds a hunk's result back until its guards are
graded, so every result a caller sees is complete.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Callable, TypedDict, Unpack

from reviewui.core.bite import coverage_map as cm
from reviewui.core.bite.grade import grade_exit_code, grade_pytest
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.guards import Guard, guards_for_hunk
from reviewui.core.bite.report import HunkResult
from reviewui.core.bite.runctx import RunContext
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk
from reviewui.core.errors import ReviewError
from reviewui.core.run.worktree import WorktreePool
from reviewui.core.target import Target


@dataclass(frozen=True)
class GuardJob:
    """One guard and the tests its run needs."""

    guard: Guard
    """The edit."""
    selection: cm.Selection
    """Which tests must run (`uncovered`: none)."""
    tests: tuple[str, ...]
    """What to pass the runner: node ids, test files, or () for the whole suite."""


DefPath = list[tuple[str, int, int]]
"""(name, first line with decorators, def line) from a module down to a function."""


@dataclass(frozen=True)
class BatchGuard:
    """A guard job the batch can apply, with where its function is."""

    job: GuardJob
    """The guard and its tests."""
    module: str
    """Dotted name of the changed module."""
    path: DefPath
    """(name, first line with decorators, def line) from the module down to the edited function."""


def select_for_guard(cov: cm.CoverageMap | None, guard: Guard) -> cm.Selection:
    """The tests that execute the guard's lines (as coverage_map selects for a hunk)."""
    if cov is None:
        return cm.Selection("all")
    executed = cov.lines.get(guard.file, {})
    contexts: set[str] = set()
    for n in guard.cover_lines:
        contexts |= executed.get(n, frozenset())
    if not contexts:
        return cm.Selection("uncovered", reason=f"no selected test executes line {guard.line}")
    tests: set[str] = set()
    for ctx in contexts:
        node, _, phase = ctx.rpartition("|")
        if phase != "call" or not node:
            return cm.Selection("all", reason="executed outside a test body (import, fixture or subprocess)")
        tests.add(node)
    return cm.Selection("tests", tuple(sorted(tests)))


def guards_of(targets: list[tuple[FileDiff, Hunk]], read: Callable[[str], bytes | None]) -> list[Guard]:
    """Every guard of the given hunks, in diff order (it needs nothing from the baseline)."""
    texts: dict[str, str | None] = {}
    found: list[Guard] = []
    for f, h in targets:
        if f.path not in texts:
            raw = read(f.path) if f.path.endswith(".py") else None
            try:
                texts[f.path] = None if raw is None else raw.decode("utf-8")
            except UnicodeDecodeError:
                texts[f.path] = None  # a guard edit must round-trip the file exactly
        found += guards_for_hunk(f, h, texts[f.path])
    return found


def select_all(guards: list[Guard], cov: cm.CoverageMap | None, selected: tuple[str, ...]) -> list[GuardJob]:
    """Each guard with the tests its run needs (coverage-guided when the map is there)."""
    jobs: list[GuardJob] = []
    for g in guards:
        sel = select_for_guard(cov, g)
        jobs.append(GuardJob(g, sel, sel.tests if sel.choice == "tests" else selected))
    return jobs


class GuardFields(TypedDict, total=False):
    """The GuardResult fields a check fills beyond the guard and its verdict."""

    failing_tests: tuple[str, ...]
    messages: dict[str, str]
    reason: str
    seconds: float
    output: str
    tests_run: tuple[str, ...]
    run_readers: tuple[str, ...]


def result(job: GuardJob, verdict: str, **kw: Unpack[GuardFields]) -> GuardResult:
    """A GuardResult for `job` with `verdict` and the given fields."""
    g = job.guard
    return GuardResult(file=g.file, hunk=g.hunk, line=g.line, kind=g.kind, description=g.description,
                       verdict=verdict, start=g.start, end=g.end, replacement=g.replacement, **kw)


def run_job(pool: WorktreePool, target: Target, job: GuardJob, ctx: RunContext, limit: float) -> GuardResult:
    """Apply one guard edit in a scratch at head, run its tests (as every run of the sweep), grade like a hunk."""
    if job.selection.choice == "uncovered":
        return result(job, "uncovered", reason=job.selection.reason)
    if ctx.cancel is not None and ctx.cancel.is_set():
        return result(job, "skipped", reason="cancelled")
    with pool.acquire() as scratch:
        try:
            scratch.checkout(target.head)
            scratch.edit_file(job.guard.file, job.guard.source.encode("utf-8"))
            scratch.hide_new_objects()  # the edit's objects, whose ids a test could work out (run/alike.py)
            seen = ctx.run(scratch.path, job.tests, limit)
        except ReviewError as e:
            return result(job, "error", reason=f"runner failed: {e}")
        root = str(scratch.path).rstrip("/") + "/"
    run = seen.run
    if seen.foreign and not run.killed:
        return result(job, "broken", reason=seen.foreign, seconds=run.seconds, tests_run=job.tests)
    g = grade_pytest(run, job.guard.names) if ctx.pytest_mode else grade_exit_code(run)

    def rel(text: str) -> str:
        return text.replace(root, "")

    return result(job, g.verdict, failing_tests=g.failing_tests, messages={k: rel(v) for k, v in g.messages.items()},
                  reason=rel(g.reason), seconds=run.seconds, output=rel(run.output), tests_run=job.tests,
                  run_readers=seen.observed.readers(job.guard.file))


class GuardJoin:
    """Holds each hunk's result until its guards are graded, then emits it with them attached."""

    def __init__(self, jobs: list[GuardJob], emit: Callable[[HunkResult], None]) -> None:
        self._emit = emit
        self._lock = threading.Lock()
        self._rank = {id(job): n for n, job in enumerate(jobs)}
        self._waiting: dict[tuple[str, int], int] = {}
        for job in jobs:
            key = (job.guard.file, job.guard.hunk)
            self._waiting[key] = self._waiting.get(key, 0) + 1
        self._guards: dict[tuple[str, int], list[tuple[int, GuardResult]]] = {}
        self._hunks: dict[tuple[str, int], HunkResult] = {}
        self._jobs = list(jobs)
        self._done: set[int] = set()
        """id() of every job graded so far."""

    def take(self, item: HunkResult | tuple[GuardJob, GuardResult] | list[tuple[GuardJob, GuardResult]]) -> None:
        """Accept a hunk's result, a (job, guard result) pair or a batch of them; emit every hunk now complete."""
        if isinstance(item, HunkResult):
            self.hunk(item)
        elif isinstance(item, tuple):
            self.guard(*item)
        else:
            for job, g in item:
                self.guard(job, g)

    def hunk(self, r: HunkResult) -> None:
        """A hunk's own revert is graded."""
        with self._lock:
            self._hunks[r.key] = r
            ready = self._ready(r.key)
        if ready is not None:
            self._emit(ready)

    def guard(self, job: GuardJob, g: GuardResult) -> None:
        """One guard is graded."""
        with self._lock:
            if id(job) in self._done:
                return  # graded twice (a fallback after a batch that did answer): the first stands
            self._done.add(id(job))
            self._guards.setdefault(g.key, []).append((self._rank.get(id(job), 0), g))
            self._waiting[g.key] -= 1
            ready = self._ready(g.key)
        if ready is not None:
            self._emit(ready)

    def holds(self, key: tuple[str, int]) -> bool:
        """True when the hunk's own result came and waits for its guards."""
        with self._lock:
            return key in self._hunks

    def finish(self, reason: str) -> int:
        """Grade `error` (with `reason`) every guard no executor answered, so every hunk still held
        is emitted with all its guards; return how many were lost."""
        with self._lock:
            lost = [job for job in self._jobs if id(job) not in self._done]
        for job in lost:
            self.guard(job, result(job, "error", reason=reason))
        return len(lost)

    def _ready(self, key: tuple[str, int]) -> HunkResult | None:
        r = self._hunks.get(key)
        if r is None or self._waiting.get(key, 0) > 0:
            return None
        del self._hunks[key]
        found = sorted(self._guards.pop(key, []), key=lambda pair: pair[0])  # the plan's (line) order
        return replace(r, guards=tuple(g for _, g in found))
