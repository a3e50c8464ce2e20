"""The local executor: a plan carried out on this machine's scratch slots (the default engine).

One thread per slot. Each session is one configured pytest session in a slot
(guard_batch.run_batch with its RevertSession), its controls among its reverts
and guards, taking tail guards when its own are done; every item alone (the
controls among them), and everything a session gives back, runs through
fallback.run_alone in the thread that had it. Results stream as they come.
"""

from __future__ import annotations

import concurrent.futures as cf
from typing import Iterator

from reviewui.core.bite import control, guard_batch
from reviewui.core.bite.executor import Result, SweepJob
from reviewui.core.bite.fallback import run_alone
from reviewui.core.bite.guard_check import BatchGuard
from reviewui.core.bite.guard_tail import Tail
from reviewui.core.bite.plan import ControlItem, GuardItem, Item, SessionItem, SweepPlan
from reviewui.core.bite.revert_batch import Entry, RevertSession
from reviewui.core.run.worktree import WorktreePool


class LocalExecutor:
    """Carries out plans on the slots of one WorktreePool."""

    name = "local"

    def __init__(self, pool: WorktreePool) -> None:
        self.pool = pool
        self.slots = pool.size

    def start(self, plan: SweepPlan, job: SweepJob) -> LocalExecution:
        """Begin `plan` on this executor's slots."""
        return LocalExecution(self.pool, plan, job)


class LocalExecution:
    """One plan running in a thread pool over the slots (see the module docstring)."""

    def __init__(self, pool: WorktreePool, plan: SweepPlan, job: SweepJob) -> None:
        self._pool = pool
        self._job = job
        self._threads = cf.ThreadPoolExecutor(max_workers=pool.size, thread_name_prefix="bite")
        tail = Tail(list(plan.tail), len(plan.sessions)) if plan.tail and plan.sessions else None
        alone = [*plan.alone, *(GuardItem(g.job) for g in plan.tail if tail is None)]
        self._futures: list[cf.Future[list[Result]]] = [self._threads.submit(self._alone, item) for item in alone]
        self._futures += [self._threads.submit(self._session, s, tail) for s in plan.sessions]

    def settle(self) -> None:
        """Nothing to check before the items here: the controls are among them."""

    def results(self) -> Iterator[Result]:
        """Each result as its thread finishes; the pool is shut down at the end."""
        try:
            for fut in cf.as_completed(self._futures):
                yield from fut.result()
        finally:
            self._threads.shutdown(wait=True, cancel_futures=True)

    def cancel(self) -> None:
        """Start nothing more, and return once what runs has stopped (through the sweep's cancel event,
        ctx.cancel, set first): no thread of this sweep still checks out or writes a slot after it,
        when the pool closes and the next sweep takes the slots."""
        self._threads.shutdown(wait=True, cancel_futures=True)

    def _alone(self, item: Item) -> list[Result]:
        return [run_alone(self._pool, self._job, item)]

    def _session(self, session: SessionItem, tail: Tail | None) -> list[Result]:
        return run_session(self._pool, self._job, session, tail)


def run_session(pool: WorktreePool, job: SweepJob, session: SessionItem, tail: Tail | None) -> list[Result]:
    """One batch session in a slot of `pool`, then whatever it gave back, each alone (also a Ray node's)."""
    # Each fork names its tests itself: the quarantined modules left out, as every run leaves them.
    kept = job.ctx.without_quarantined
    entries: list[Entry] = [(r.file, None, kept(r.tests)) if isinstance(r, ControlItem)
                            else (r.file, r.hunk, kept(r.tests)) for r in session.reverts]
    reverts = RevertSession(entries, job.diff, job.per_run, collect=bool(session.guards) or tail is not None) \
        if session.reverts else None
    nulls: dict[int, ControlItem] = {}
    guards: list[BatchGuard] = []
    for g in session.guards:
        if isinstance(g, ControlItem):
            if g.guard is None:
                continue
            nulls[id(g.guard.job)] = g
            guards.append(g.guard)
        else:
            guards.append(g)
    try:
        graded, again = guard_batch.run_batch(pool, job.target, job.ctx, guards, job.per_run, job.ctx.cancel,
                                              reverts, tail)
    finally:
        left = tail.finish() if tail is not None else []
    out: list[Result] = []
    for g_job, res in graded:
        c = nulls.get(id(g_job))
        out.append(control.judge_guard(res, c.tests) if c is not None else (g_job, res))
    back: list[Item] = [nulls.get(id(j)) or GuardItem(j) for j in again]
    back += [GuardItem(g.job) for g in left]
    if reverts is not None:
        out += reverts.graded
        # named by the plan's own selection, as a control run alone is (Sweep.hold matches them)
        out += [control.judge(seen, "revert", session.reverts[n].tests, session.reverts[n].file.path)
                for n, seen in reverts.nulls]
        by_entry = {id(e): session.reverts[n] for n, e in enumerate(entries)}
        back += [by_entry[id(e)] for e in reverts.again]
    return out + [run_alone(pool, job, item) for item in back]
