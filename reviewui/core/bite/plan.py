"""The sweep's plan: every hunk revert and guard a bite sweep grades, decided before anything runs.

The baseline and the instrument check come first (prepare.py): they decide
which tests each hunk and guard needs, and whether anything can be learned
at all. `plan_sweep` turns that into a `SweepPlan`, a pure function of its
inputs (no run, no git, no pytest), which an executor then carries out
(executor.py: the local one in executor_local.py, Ray in executor_ray.py).

What a plan holds, and the rules every executor keeps:

- `known`: hunks graded without a run (`skipped` after a baseline that is
  not green, `uncovered` when no test executes them). Reported only once
  the instrument check and the controls have passed.
- `alone`: items run each on its own in a fresh scratch at the head
  (fallback.run_alone). This is also the one fallback path: whatever a
  batch session cannot grade exactly comes back and runs alone.
- `sessions`: configured pytest sessions, one per slot at most; each forks
  its hunk reverts before it collects (revert_batch.py), then its guards
  (guard_batch.py). An item's affinity is its session.
- `tail`: batchable guards held back for whichever session is free first
  (guard_tail.py); what no session took runs alone.
- `control`: one batchable guard, graded with nothing edited in a session
  of its own before anything is reported (control.py). When it "bites", the
  tests can tell a guard run from the baseline and the sweep is refused.

Every planned hunk and guard comes back exactly once, whatever an executor
does with it: run_bite grades `error` ("lost by the executor") what none
reported. Executors hand back the plan's own job objects (GuardJoin matches
them by identity).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

from reviewui.core.bite import guard_batch, guard_tail, revert_batch
from reviewui.core.bite.guard_batch import BatchGuard
from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.origin import ChangedModule
from reviewui.core.bite.prepare import HunkPlan
from reviewui.core.bite.report import HunkResult
from reviewui.core.bite.revert_grade import hunk_result
from reviewui.core.diff import FileDiff, Hunk


@dataclass(frozen=True)
class RevertItem:
    """One hunk to revert and the tests its run needs (() is the whole suite)."""

    file: FileDiff
    hunk: Hunk
    tests: tuple[str, ...]

    @property
    def key(self) -> tuple[str, int]:
        """The hunk's key, as its result carries it."""
        return self.hunk.key

    def pending(self) -> revert_batch.Pending:
        """The (file, hunk, tests) triple the revert modules take."""
        return (self.file, self.hunk, self.tests)


@dataclass(frozen=True)
class GuardItem:
    """One guard revert run on its own."""

    job: GuardJob


Item = RevertItem | GuardItem
"""What runs alone in a fresh scratch."""


@dataclass(frozen=True)
class SessionItem:
    """One configured pytest session: its reverts forked before it collects, then its guards."""

    slot: int
    """Which of the sweep's sessions this is (0-based; at most one per slot runs at a time)."""
    reverts: tuple[RevertItem, ...]
    guards: tuple[BatchGuard, ...]


@dataclass(frozen=True)
class SweepPlan:
    """Everything a sweep grades, and how (see the module docstring for the rules)."""

    known: tuple[HunkResult, ...] = ()
    alone: tuple[Item, ...] = ()
    sessions: tuple[SessionItem, ...] = ()
    tail: tuple[BatchGuard, ...] = ()
    control: BatchGuard | None = None
    scopes: Mapping[tuple[str, int], str] = field(default_factory=dict)
    """Where each coverage-guided hunk's tests were looked for (HunkResult.scope)."""
    batching_off: str | None = None
    """Why nothing is batched (said in the report), None when batching was allowed."""

    def hunk_keys(self) -> list[tuple[str, int]]:
        """Every planned hunk, in plan order."""
        run = [i.key for i in self.alone if isinstance(i, RevertItem)]
        run += [r.key for s in self.sessions for r in s.reverts]
        return [r.key for r in self.known] + run

    def guard_jobs(self) -> list[GuardJob]:
        """Every planned guard (the control's aside: it is not graded for the report)."""
        jobs = [i.job for i in self.alone if isinstance(i, GuardItem)]
        jobs += [g.job for s in self.sessions for g in s.guards]
        return jobs + [g.job for g in self.tail]


@dataclass(frozen=True)
class Batching:
    """What deciding which items a session can run exactly needs."""

    modules: list[ChangedModule]
    """The changed Python modules (a guard's function is found through its module)."""
    head_text: Callable[[str], str | None]
    """A file's text at the head (each file is parsed once)."""


def plan_sweep(
    targets: list[tuple[FileDiff, Hunk]],
    hunk_plans: Mapping[tuple[str, int], HunkPlan] | str,
    guards: list[GuardJob],
    *,
    slots: int,
    batching: Batching | str | None,
) -> SweepPlan:
    """The plan for grading `targets` (and `guards`) on `slots` slots.

    `hunk_plans` is each hunk's test choice from the baseline, or a string saying
    why nothing can be learned (the baseline is not green: every hunk `skipped`,
    no guard planned). `batching` is None when the command is not pytest, a
    string when batching is off (why), else what the batch split needs.
    """
    if isinstance(hunk_plans, str):
        return SweepPlan(known=tuple(hunk_result(h, "skipped", reason=hunk_plans) for _, h in targets))
    known: list[HunkResult] = []
    pending: list[RevertItem] = []
    scopes: dict[tuple[str, int], str] = {}
    for f, h in targets:
        plan = hunk_plans[h.key]
        if plan.scope:
            scopes[h.key] = plan.scope
        if plan.uncovered:
            known.append(replace(hunk_result(h, "uncovered", reason=plan.reason), scope=plan.scope))
        else:
            pending.append(RevertItem(f, h, plan.tests))
    if not isinstance(batching, Batching):
        alone: list[Item] = [*pending, *(GuardItem(j) for j in guards)]
        return SweepPlan(known=tuple(known), alone=tuple(alone), scopes=scopes, batching_off=batching)
    by_pending = {id(r.pending()[1]): r for r in pending}
    reverts, solo = revert_batch.batchable([r.pending() for r in pending])
    batch, rest = guard_batch.batchable(guards, batching.modules, batching.head_text)
    dealt, held = guard_tail.take_tail(batch, slots)
    sessions, left = revert_batch.deal(reverts, guard_batch.split(dealt, slots), slots,
                                       lambda chunk: {g.job.guard.file for g in chunk})

    def items(chosen: list[revert_batch.Pending]) -> list[RevertItem]:
        return [by_pending[id(p[1])] for p in chosen]

    alone = [*items(solo), *items(left), *(GuardItem(j) for j in rest)]
    planned = tuple(SessionItem(n, tuple(items(chunk)), tuple(gs)) for n, (chunk, gs) in enumerate(sessions))
    return SweepPlan(known=tuple(known), alone=tuple(alone), sessions=planned, tail=tuple(held),
                     control=batch[0] if batch else None, scopes=scopes)
