"""The sweep's witness phase: each hunk with something toothless waits for its witnesses, then goes on.

run_bite (engine.py) hands every complete hunk result to `WitnessPhase.take`
instead of reporting it: a hunk with no toothless guard (and not toothless
itself) passes straight on; the others are searched in a thread of their
own while the sweep's other items run, taking a scratch slot of the sweep's
pool like any item (so at most one slot more is busy than without), and are
reported with a `Witness` on each toothless guard (and on the hunk). The
sweep drains the phase before its completeness check, so every hunk still
comes back exactly once. Nothing here is reported before the instrument
check and controls passed: the phase only ever sees what the join emits.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
import time
from dataclasses import replace
from typing import Callable

from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.guards import Guard
from reviewui.core.bite.report import HunkResult
from reviewui.core.bite.runctx import RunContext
from reviewui.core.diff import Diff
from reviewui.core.run.worktree import WorktreePool
from reviewui.core.target import Target as Branch
from reviewui.core.witness import literal
from reviewui.core.witness.budget import Budget
from reviewui.core.witness.model import FunctionSeeds, Seeds, Witness
from reviewui.core.witness.search import Answer, run_search
from reviewui.core.witness.seeds import SeedCapture
from reviewui.core.witness.targets import Target, guard_key, toothless_targets
from reviewui.core.witness.verify import WitnessTest, compose, place, verify

NOT_A_FUNCTION = "not inside a module-level function or method, or the test Python could not be told which"
"""Why a toothless guard or hunk has no witness to look for."""
SEARCH_SLACK = 3.0
"""Seconds a search run may take per target beyond its budget (the fork, collection)."""


class WitnessPhase:
    """Witnesses for the toothless guards and hunks of one sweep (see the module docstring)."""

    def __init__(self, pool: WorktreePool, branch: Branch, diff: Diff, ctx: RunContext, guards: list[Guard],
                 read: Callable[[str], bytes | None], tree: list[str], budget: Budget, per_run: float,
                 why_not: str = "") -> None:
        self.pool, self.branch, self.diff, self.ctx = pool, branch, diff, ctx
        self.guards = {guard_key(g): g for g in guards}
        self.read, self.taken, self.budget, self.per_run = read, set(tree), budget, per_run
        self.project = literal.project_names(tree)
        self.modules = {m.path: m for m in ctx.modules}
        self._threads = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="witness")
        self._pending: list[cf.Future[None]] = []
        self._lock = threading.Lock()
        self._open = not why_not
        self._why_not = why_not or "graded after the sweep's searches ended"
        """Why a hunk passes on unsearched: no search can be made in this sweep, or it came too late."""
        self._n = 0

    def hold(self, emit: Callable[[HunkResult], None]) -> Callable[[HunkResult], None]:
        """The `emit` a GuardJoin calls: a hunk with something toothless is searched first."""
        def take(r: HunkResult) -> None:
            if not _toothless(r):
                emit(r)
                return
            with self._lock:
                if self._open and not self._cancelled():
                    self._pending.append(self._threads.submit(self._searched, r, emit))
                    return
            emit(attach(r, {}, "cancelled" if self._cancelled() else self._why_not))
        return take

    def drain(self) -> None:
        """Wait for every search; later hunks pass on with no witness looked for."""
        with self._lock:
            self._open = False
            self._why_not = "graded after the sweep's searches ended"
            pending = list(self._pending)
        cf.wait(pending)
        self._threads.shutdown(wait=True)

    def close(self) -> None:
        """Start no more searches and wait for a running one (a cancelled sweep's runs stop at once):
        none may outlive the sweep's scratch slots."""
        with self._lock:
            self._open = False
        self._threads.shutdown(wait=True, cancel_futures=True)

    def _head_text(self, path: str) -> str | None:
        """A changed file's text at the head (None when it cannot be read as UTF-8)."""
        raw = self.read(path)
        try:
            return raw.decode("utf-8") if raw is not None else None
        except UnicodeDecodeError:
            return None

    def _cancelled(self) -> bool:
        return self.ctx.cancel is not None and self.ctx.cancel.is_set()

    def _searched(self, r: HunkResult, emit: Callable[[HunkResult], None]) -> None:
        found: dict[str, Witness] = {}
        why = NOT_A_FUNCTION
        try:
            f = self.diff.file(r.file)
            h = f.hunks[r.index] if f is not None and 0 <= r.index < len(f.hunks) else None
            targets = toothless_targets(r, f, h, self.read, self.guards, self.modules.get(r.file))
            found = self.witnesses(r, targets) if targets else {}
            if self._cancelled():
                found = {}  # what a cancelled search said is not an answer
        except Exception as e:  # noqa: BLE001 - a bug here must not lose the hunk: it is reported without
            why = literal.said(f"the search failed: {type(e).__name__}: {e}")
        finally:
            emit(attach(r, found, "cancelled" if self._cancelled() else why))

    def witnesses(self, r: HunkResult, targets: list[Target]) -> dict[str, Witness]:
        """ident -> the witness (or why none) of each target, searched and re-verified."""
        tests = list(dict.fromkeys([*(t for g in r.guards if g.verdict == "toothless" for t in g.tests_run),
                                    *r.tests_run]))
        limit = 2 * self.per_run + len(targets) * (self.budget.seconds + SEARCH_SLACK)
        # The tests' own arguments first, in the same session, watched only now that something toothless is.
        wanted = SeedCapture.of(targets, self.project, self.per_run)
        with self.pool.acquire() as scratch:
            scratch.checkout(self.branch.head)
            answers = run_search(scratch, self.ctx, targets, {}, self.budget, tests, limit, self.project, wanted)
        captured, failed = wanted.seeds() or Seeds(), wanted.failed()
        seeds = {t.ident: captured.of(t.file, t.def_line) for t in targets}
        made: list[WitnessTest] = []
        for t in targets:
            a = answers.get(t.ident)
            if a is not None and a.found is not None:
                with self._lock:
                    self._n += 1
                    n = self._n
                path = place(t, tests, self.taken, n)
                self.taken.add(path)
                made.append(WitnessTest(t, a.found, path, compose(a.found, t)))
        start = time.monotonic()
        kept, dropped = verify(self.pool, self.branch, self.ctx, made, self.per_run, self._head_text)
        share = (time.monotonic() - start) / max(1, len(made))
        return {t.ident: _witness(t, _with_seed_words(answers.get(t.ident), seeds[t.ident], failed),
                                  kept, dropped, share) for t in targets}


def _witness(t: Target, a: Answer | None, kept: list[WitnessTest], dropped: list[tuple[WitnessTest, str]],
             share: float) -> Witness:
    if a is None:
        return Witness(False, reason="the search gave no answer (its run failed or could not be believed)")
    good = next((w for w in kept if w.target is t), None)
    if good is not None and a.found is not None:
        return Witness(True, literal.call_words(a.found.callee, a.found.args), a.found.head, a.found.reverted,
                       a.tries, a.seconds + share, good.code)
    bad = next((why for w, why in dropped if w.target is t), None)
    if bad is not None:
        return Witness(False, tries=a.tries, seconds=a.seconds + share, dropped=1,
                       reason=f"one was found and dropped at re-verification: {bad}")
    return Witness(False, tries=a.tries, seconds=a.seconds, reason=a.why)


def _with_seed_words(a: Answer | None, seeds: FunctionSeeds | None, failed: str = "") -> Answer | None:
    """The answer, its reason saying what the capture saw when it had no seed to start from
    (`failed`: why that run could not say)."""
    if a is None or a.found is not None or (seeds is not None and seeds.seeds):
        return a
    if failed:
        why = f"no seed: {failed}"
    elif seeds is None:
        why = "no seed: no selected test called it in the capture"
    else:
        why = f"no seed: the capture saw {seeds.seen} call(s), none could be written as source" + \
            (f" ({seeds.why})" if seeds.why else "")
    return replace(a, why=why if not a.tries else f"{why}; drawn from its type hints")


def _toothless(r: HunkResult) -> bool:
    return r.verdict == "toothless" or any(g.verdict == "toothless" for g in r.guards)


def attach(r: HunkResult, found: dict[str, Witness], why: str) -> HunkResult:
    """`r` with a witness on each toothless guard (and on itself when toothless): found, or why none."""
    guards: list[GuardResult] = []
    for n, g in enumerate(r.guards):
        if g.verdict == "toothless":
            g = replace(g, witness=found.get(f"{r.file}:{r.index}:g{n}") or Witness(False, reason=why))
        guards.append(g)
    witness = found.get(f"{r.file}:{r.index}") or Witness(False, reason=why) if r.verdict == "toothless" else None
    return replace(r, guards=tuple(guards), witness=witness)
