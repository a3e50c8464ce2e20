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
- `sessions`: configured pytest sessions, one per slot at most, and no more
  than give each `share` of work (`session_count`: a small plan in one); each forks
  its hunk reverts before it collects (revert_batch.py), then its guards
  (guard_batch.py). An item's affinity is its session.
- `tail`: batchable guards held back for whichever session is free first
  (guard_tail.py); what no session took runs alone.
- controls (`ControlItem`, control.py): null runs, shaped as the graded runs
  beside them (a revert that writes a file's own code, a guard that swaps in
  its function's own code) and running a neighbour's selection, placed at
  random among every session's reverts and guards and among the items
  alone: at least `CONTROLS` per phase, one in each of as many equal strata,
  so one always falls in the later half. A control that fails refuses the
  sweep; nothing is reported before every control came back.

Every planned hunk and guard comes back exactly once, whatever an executor
does with it: run_bite grades `error` ("lost by the executor") what none
reported. Executors hand back the plan's own job objects (GuardJoin matches
them by identity).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Sequence, TypeVar

from reviewui.core.bite import guard_batch, guard_tail, revert_batch
from reviewui.core.bite.control import null_guard
from reviewui.core.bite.guard_check import BatchGuard
from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.origin import ChangedModule
from reviewui.core.bite.prepare import HunkPlan
from reviewui.core.bite.report import HunkResult
from reviewui.core.bite.revert_grade import hunk_result
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk


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


@dataclass(frozen=True)
class ControlItem:
    """A null run among the graded ones: shaped as its neighbour, with nothing changed; it must stay green."""

    file: FileDiff
    """The file a revert-shaped control rewrites with its own code (inert_edit.null_bytes) and commits, as a revert would."""
    tests: tuple[str, ...]
    """Its neighbour's selection (the graded runs' own)."""
    shape: str = "revert"
    """`revert` or `guard`: which of the runs beside it it looks like (and which refusal it gives)."""
    guard: BatchGuard | None = None
    """In a session's guards: the neighbour guard with its function's code swapped for the head's own."""


Item = RevertItem | GuardItem | ControlItem
"""What runs alone in a fresh scratch."""


@dataclass(frozen=True)
class SessionItem:
    """One configured pytest session: its reverts forked before it collects, then its guards."""

    slot: int
    """Which of the sweep's sessions this is (0-based; at most one per slot runs at a time)."""
    reverts: tuple[RevertItem | ControlItem, ...]
    guards: tuple[BatchGuard | ControlItem, ...]


@dataclass(frozen=True)
class SweepPlan:
    """Everything a sweep grades, and how (see the module docstring for the rules)."""

    known: tuple[HunkResult, ...] = ()
    alone: tuple[Item, ...] = ()
    sessions: tuple[SessionItem, ...] = ()
    tail: tuple[BatchGuard, ...] = ()
    scopes: Mapping[tuple[str, int], str] = field(default_factory=dict)
    """Where each coverage-guided hunk's tests were looked for (HunkResult.scope)."""
    batching_off: str | None = None
    """Why nothing is batched (said in the report), None when batching was allowed."""

    def hunk_keys(self) -> list[tuple[str, int]]:
        """Every planned hunk, in plan order."""
        run = [i.key for i in self.alone if isinstance(i, RevertItem)]
        run += [r.key for s in self.sessions for r in s.reverts if isinstance(r, RevertItem)]
        return [r.key for r in self.known] + run

    def guard_jobs(self) -> list[GuardJob]:
        """Every planned guard (the controls aside: they are not graded for the report)."""
        jobs = [i.job for i in self.alone if isinstance(i, GuardItem)]
        jobs += [g.job for s in self.sessions for g in s.guards if isinstance(g, BatchGuard)]
        return jobs + [g.job for g in self.tail]

    @property
    def controls(self) -> int:
        """How many null runs the plan holds (alone and in its sessions)."""
        return (sum(isinstance(i, ControlItem) for i in self.alone)
                + sum(isinstance(x, ControlItem) for s in self.sessions for x in (*s.reverts, *s.guards)))


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
    rng: random.Random | None = None,
    controls: int | None = None,
    share: float = 0.0,
) -> SweepPlan:
    """The plan for grading `targets` (and `guards`) on `slots` slots.

    `hunk_plans` is each hunk's test choice from the baseline, or a string saying
    why nothing can be learned (the baseline is not green: every hunk `skipped`,
    no guard planned). `batching` is None when the command is not pytest, a
    string when batching is off (why), else what the batch split needs. `rng`
    places the controls (default: the system's randomness); `controls` is how many
    each phase gets at least (default CONTROLS; 0 only for the bench's comparison). `share` is
    the work a session must get before one more is opened (`session_count`; 0: one per slot).
    """
    if isinstance(hunk_plans, str):
        return SweepPlan(known=tuple(hunk_result(h, "skipped", reason=hunk_plans) for _, h in targets))
    rng = rng or random.SystemRandom()
    least = CONTROLS if controls is None else controls
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
    files = {f.path: f for f, _ in targets}
    if not isinstance(batching, Batching):
        alone: list[Item] = [*pending, *(GuardItem(j) for j in guards if j.selection.choice != "uncovered")]
        alone = _with_controls(alone, least, rng, lambda near: _alone_control(near, files))
        alone += [GuardItem(j) for j in guards if j.selection.choice == "uncovered"]
        return SweepPlan(known=tuple(known), alone=tuple(alone), scopes=scopes, batching_off=batching)
    by_pending = {id(r.pending()[1]): r for r in pending}
    reverts, solo = revert_batch.batchable([r.pending() for r in pending])
    batch, rest = guard_batch.batchable(guards, batching.modules, batching.head_text)
    opened = session_count(len(reverts), len(batch), slots, share)
    dealt, held = guard_tail.take_tail(batch, opened)
    sessions, left = revert_batch.deal(reverts, guard_batch.split(dealt, opened), opened,
                                       lambda chunk: {g.job.guard.file for g in chunk})

    def items(chosen: list[revert_batch.Pending]) -> list[RevertItem]:
        return [by_pending[id(p[1])] for p in chosen]

    def guard_control(near: BatchGuard) -> ControlItem | None:
        null = null_guard(near, batching.head_text)
        f = files.get(near.job.guard.file)
        return None if null is None or f is None else ControlItem(f, near.job.tests, "guard", null)

    graded: list[Item] = [*items(solo), *items(left), *(GuardItem(j) for j in rest if j.selection.choice != "uncovered")]
    alone = _with_controls(graded, least, rng, lambda near: _alone_control(near, files))
    alone += [GuardItem(j) for j in rest if j.selection.choice == "uncovered"]
    planned: list[SessionItem] = []
    for n, (chunk, gs) in enumerate(sessions):
        rv = _with_controls(items(chunk), least, rng, _revert_control)
        gv = _with_controls(gs, least, rng, guard_control)
        planned.append(SessionItem(n, tuple(rv), tuple(gv)))
    return SweepPlan(known=tuple(known), alone=tuple(alone), sessions=tuple(planned), tail=tuple(held),
                     scopes=scopes)


SESSION_SHARE = 8.0
"""The work each session of a sweep gets at least (`session_count`), in revert forks: a session's
start (pytest configuring in a fork, its staging, its reports read back) costs about three of them
and its two controls two more, so a small plan split over every slot spends more than it saves
(8 reverts at --jobs 2: a third more CPU, at best 1.45x faster on two idle cores, slower on busy ones)."""
GUARD_WORK = 0.5
"""A guard's fork in revert forks: it runs in the collected session, collecting nothing itself."""


def session_count(reverts: int, guards: int, slots: int, share: float) -> int:
    """How many batch sessions a plan of `reverts` and `guards` batchable items opens on `slots`: one
    per slot, unless that leaves a session less than `share` of work (a revert counts 1, a guard
    GUARD_WORK); at least one. `share` 0: one per slot."""
    if share <= 0:
        return max(1, slots)
    return max(1, min(slots, int((reverts + guards * GUARD_WORK) // share)))


CONTROLS = 2
"""Null runs each phase of a sweep (a session's reverts, its guards, the items alone) holds at least."""
PER_CONTROL = 64
"""One more control for every this many graded runs of a phase."""
T = TypeVar("T")


def _with_controls(graded: Sequence[T], least: int, rng: random.Random,
                   make: Callable[[T], ControlItem | None]) -> list[T | ControlItem]:
    """`graded` with controls placed among them: the sequence cut into as many equal strata as there
    are controls, one control at a random place in each (so one is always in the later half), each
    shaped as a graded run of the phase (`make`; None: that one cannot be mirrored, no control there):
    its neighbour, unless the neighbour's selection already has a control and another has none (then
    one of those, at random), so the controls cover as many of the phase's selections as they can."""
    n = len(graded)
    if not n or least <= 0:
        return list(graded)
    count = least + n // PER_CONTROL
    places = sorted(rng.randint(k * n // count, (k + 1) * n // count) for k in range(count))
    used: set[tuple[str, ...]] = set()
    out: list[T | ControlItem] = []
    at = 0
    for place in places:
        out += graded[at:place]
        at = place
        near = graded[min(place, n - 1)] if place == n or rng.random() < 0.5 else graded[max(place - 1, 0)]
        if _tests_of(near) in used:
            fresh = [g for g in graded if _tests_of(g) not in used]
            near = rng.choice(fresh) if fresh else near
        made = make(near)
        if made is not None:
            used.add(made.tests)
            out.append(made)
    return out + list(graded[at:])


def _tests_of(item: object) -> tuple[str, ...]:
    """The selection a graded item runs."""
    if isinstance(item, (RevertItem, ControlItem)):
        return item.tests
    if isinstance(item, GuardItem):
        return item.job.tests
    if isinstance(item, BatchGuard):
        return item.job.tests
    return ()


def _revert_control(near: RevertItem) -> ControlItem:
    return ControlItem(near.file, near.tests, "revert")


def _alone_control(near: Item, files: Mapping[str, FileDiff]) -> ControlItem | None:
    """A control run alone, shaped as `near`: its file rewritten with its own code (a file the head
    does not have: the tree committed as it is), its tests run."""
    if isinstance(near, RevertItem):
        return ControlItem(near.file, near.tests, "revert")
    if isinstance(near, GuardItem):
        f = files.get(near.job.guard.file)
        return ControlItem(f, near.job.tests, "guard") if f is not None else None
    return None
