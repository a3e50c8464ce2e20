"""The Ray executor: the same plan carried out by the nodes of a Ray cluster (`--engine ray`).

The head's tree (core/ray/tree.py: tracked files plus declared extras, never
`.git`, size-checked) is shipped once through the object store; each node's
actor (core/ray/node.py) unpacks it once and runs what it is dealt with the
local executor's own paths, in its own sandbox, with its own warm server.
Dealing: the plan's sessions go to the nodes up front, at most a node's slots
each, the tail guards with the sessions that may take them; every node first
checks its own environment (the plan's tests green at its head), and `settle`
waits for all of them; the controls ride in the sessions and among the items
alone, as on the local executor; items alone go to whichever
node has a slot free, as the results come back (`ray.wait`). Results are
mapped back to the plan's own objects (wire.Encoder). `cancel` tells every
node to kill its running process trees and sends nothing more.

A node that dies (its actor gone: the machine lost, the process killed) is
dropped for the rest of the sweep, and what it had not given back runs again
alone on the nodes left: the items of its sessions and of its share of the
tail (less what another of its sessions already answered) and its items
alone. Invariant: an item's result is yielded once, by the node that answered
it; nothing is given twice. With no node left, what remains is not yielded and
run_bite grades it "lost by the executor".
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections import deque
from typing import Any, Callable, Iterator

from reviewui.core.bite.executor import Result, SweepJob
from reviewui.core.bite.report import HunkResult
from reviewui.core.bite.plan import ControlItem, GuardItem, Item, RevertItem, SessionItem, SweepPlan
from reviewui.core.errors import ReviewError
from reviewui.core.ray.cluster import NodeRef, RayCluster
from reviewui.core.ray.tree import DEFAULT_SHIP_LIMIT, build_tree
from reviewui.core.ray.wire import DiffWire, Encoder, NodeShare, NodeSpec
from reviewui.core.run.worktree import WorktreePool

_END_WAIT = 60.0
"""Seconds a node is given to stop or close a sweep before the driver stops waiting for it."""
_POLL = 0.2
"""Seconds between looks at the reviewer's cancel event while waiting for results."""


class RayExecutor:
    """Carries out plans on a connected Ray cluster (the driver's own pool only prepared them)."""

    name = "ray"
    session_share = 0.0
    """A session per slot whatever the plan's size (plan.session_count): the slots are other
    machines' cores, idle unless given work, and the plan is dealt to them up front."""

    def __init__(self, pool: WorktreePool, cluster: RayCluster, extras: tuple[str, ...] = (),
                 ship_limit: int = DEFAULT_SHIP_LIMIT) -> None:
        self.pool = pool
        self.cluster = cluster
        self.slots = cluster.slots
        self.extras = extras
        self.ship_limit = ship_limit

    def start(self, plan: SweepPlan, job: SweepJob) -> RayExecution:
        """Ship the head's tree, deal the plan, start it on the nodes."""
        shipped = build_tree(job.target.repo_dir, job.target.head, self.extras, self.ship_limit)
        self.cluster.ship(shipped)
        return RayExecution(self.cluster, plan, job, shipped.key)


class RayExecution:
    """One plan running on the cluster's nodes (see the module docstring)."""

    def __init__(self, cluster: RayCluster, plan: SweepPlan, job: SweepJob, key: str) -> None:
        self._ray = cluster.ray
        self._nodes = cluster.nodes
        self._sweep = uuid.uuid4().hex
        self._enc = Encoder(job.diff, plan.guard_jobs())
        self._cancelled = False
        self._halt: threading.Event | None = job.ctx.cancel
        self._open: list[NodeRef] = []
        self._busy = {id(n): 0 for n in self._nodes}
        self._running: dict[Any, tuple[NodeRef, list[Item]]] = {}
        """Each outstanding ref: its node, and what runs again alone if that node dies."""
        self._dead: set[int] = set()
        self._answered: set[tuple[str, object]] = set()
        """Each item whose result was yielded: ("hunk", its key) or ("guard", id() of its job)."""
        self._tails: dict[int, list[GuardItem]] = {}
        alone = [*plan.alone, *(GuardItem(g.job) for g in plan.tail if not plan.sessions)]
        self._queue: deque[Item] = deque(alone)
        shares, placed = self._deal(plan)
        spec = _spec(job, plan)
        self._open = list(self._nodes)
        try:
            begun = {n.actor.begin.remote(self._sweep, key, spec, share, n.slots): n
                     for n, share in zip(self._nodes, shares, strict=True)}
            for ref, node in begun.items():
                try:
                    _get(self._ray, ref)
                except self._ray.exceptions.RayActorError:
                    self._lost(node, [])
        except BaseException:
            self._end()
            raise
        live = [n for n in self._nodes if id(n) not in self._dead]
        # Every node checks its own environment first (its head green): a node whose tests fail
        # at the head would make every revert "bite".
        self._controls = {node.actor.control.remote(self._sweep): node for node in live}
        for node in live:
            self._busy[id(node)] += 1
        for node, n, session in placed:
            again: list[Item] = [*session.reverts, *(g if isinstance(g, ControlItem) else GuardItem(g.job)
                                                     for g in session.guards)]
            if id(node) in self._dead:
                self._queue.extend(again)
            else:
                self._submit(node, node.actor.session.remote(self._sweep, n), again)
        self._fill()

    def _deal(self, plan: SweepPlan) -> tuple[list[NodeShare], list[tuple[NodeRef, int, SessionItem]]]:
        """Each node's sessions (at most its slots, the least loaded first) and a share of the tail."""
        sessions: list[list[SessionItem]] = [[] for _ in self._nodes]
        for s in plan.sessions:
            i = min(range(len(self._nodes)), key=lambda k: len(sessions[k]) / self._nodes[k].slots)
            sessions[i].append(s)
        with_sessions = [i for i, ss in enumerate(sessions) if ss]
        tails: list[list[Any]] = [[] for _ in self._nodes]
        if with_sessions:
            for g, i in zip(plan.tail, itertools.cycle(with_sessions)):
                tails[i].append(g)
        self._tails = {id(self._nodes[i]): [GuardItem(g.job) for g in tails[i]] for i in range(len(self._nodes))}
        shares = [NodeShare(tuple(self._enc.session(s) for s in sessions[i]),
                            tuple(self._enc.batch(g) for g in tails[i]))
                  for i in range(len(self._nodes))]
        placed = [(self._nodes[i], n, s) for i, ss in enumerate(sessions) for n, s in enumerate(ss)]
        return shares, placed

    def _submit(self, node: NodeRef, ref: Any, again: list[Item]) -> None:
        self._running[ref] = (node, again)
        self._busy[id(node)] += 1

    def _fill(self) -> None:
        """Send items alone to the live nodes with a slot free (none once cancelled)."""
        while self._queue and not self._cancelled:
            free = [n for n in self._nodes if self._busy[id(n)] < n.slots and id(n) not in self._dead]
            if not free:
                return
            node = min(free, key=lambda n: self._busy[id(n)] / n.slots)
            item = self._queue.popleft()
            self._submit(node, node.actor.alone.remote(self._sweep, self._enc.item(item)), [item])

    def _lost(self, node: NodeRef, again: list[Item]) -> None:
        """`node` died: drop it, and run again alone what it had not answered (its tail share once)."""
        if id(node) not in self._dead:
            self._dead.add(id(node))
            self._open = [n for n in self._open if n is not node]
            again = [*again, *self._tails.get(id(node), [])]
        self._queue.extend(i for i in again if self._key(i) not in self._answered)

    @staticmethod
    def _key(item: Item) -> tuple[str, object]:
        if isinstance(item, ControlItem):
            return ("control", id(item))  # run again if its node died: a control answered twice is harmless
        return ("hunk", item.key) if isinstance(item, RevertItem) else ("guard", id(item.job))

    def settle(self) -> None:
        """Return once every node's checks passed; raise the first UntrustedCommand one gave."""
        if not self._controls:
            return
        refs = list(self._controls)
        failed = []
        for ref in refs:
            node = self._controls.pop(ref)
            self._busy[id(node)] -= 1
            try:
                failed.append(_get(self._ray, ref))
            except self._ray.exceptions.RayActorError:
                self._lost(node, [])  # its sessions come back as lost too, and run again elsewhere
        if len(self._dead) == len(self._nodes):
            self._end()
            raise ReviewError("every Ray node of the sweep died before it checked its head")
        self._fill()
        for f in failed:
            if f is not None:
                raise f

    def results(self) -> Iterator[Result]:
        """Each node's results as they come back; every node's sweep is closed at the end. An item
        whose node failed is not yielded (run_bite grades it "lost by the executor")."""
        try:
            while self._running:
                if self._halt is not None and self._halt.is_set() and not self._cancelled:
                    self.cancel()
                ready, _ = self._ray.wait(list(self._running), num_returns=1, timeout=_POLL)
                for ref in ready:
                    node, again = self._running.pop(ref)
                    self._busy[id(node)] -= 1
                    try:
                        backs = _get(self._ray, ref)
                    except self._ray.exceptions.RayActorError:
                        self._lost(node, again)
                        continue
                    except self._ray.exceptions.RayError:
                        continue
                    for back in backs:
                        result = self._enc.back(back)
                        if isinstance(result, tuple):
                            self._answered.add(("guard", id(result[0])))
                        elif isinstance(result, HunkResult):
                            self._answered.add(("hunk", result.key))
                        yield result
                self._fill()
        finally:
            self._end()

    def cancel(self) -> None:
        """Send nothing more; every node kills its running process trees (waited for, a while)."""
        self._cancelled = True
        self._queue.clear()
        refs = [n.actor.cancel.remote(self._sweep) for n in self._open]
        self._ray.wait(refs, num_returns=len(refs), timeout=_END_WAIT)
        running = list(self._running) + list(self._controls)
        if running:
            self._ray.wait(running, num_returns=len(running), timeout=_END_WAIT)
        self._end()  # what finished is still read by results(); the nodes' slots go now

    def _end(self) -> None:
        nodes, self._open = self._open, []
        if nodes:
            refs = [n.actor.end.remote(self._sweep) for n in nodes]
            self._ray.wait(refs, num_returns=len(refs), timeout=_END_WAIT)


def _spec(job: SweepJob, plan: SweepPlan) -> NodeSpec:
    ctx = job.ctx
    return NodeSpec(list(ctx.argv), dict(ctx.user_env), list(ctx.modules), ctx.settings, ctx.data_files,
                    ctx.checkout_dirs, ctx.suite, ctx.quarantined, job.per_run, DiffWire.of(job.diff),
                    head_tests(plan))


def head_tests(plan: SweepPlan) -> tuple[str, ...]:
    """Every test the plan's items run, in plan order; () when one of them runs the whole suite."""
    lists = [i.job.tests if isinstance(i, GuardItem) else i.tests for i in plan.alone]
    lists += [r.tests for s in plan.sessions for r in s.reverts]
    lists += [g.tests if isinstance(g, ControlItem) else g.job.tests for s in plan.sessions for g in s.guards]
    lists += [g.job.tests for g in plan.tail]
    if any(not t for t in lists):
        return ()
    return tuple(dict.fromkeys(t for tests in lists for t in tests))


def ray_engine(address: str | None, *, jobs: int | None = None, extras: tuple[str, ...] = (),
               ship_limit: int = DEFAULT_SHIP_LIMIT) -> Callable[[WorktreePool], RayExecutor]:
    """The engine factory run_bite takes (`engine=`): connects now (start-up is paid here, once per
    process), and makes a RayExecutor for each sweep's pool."""
    from reviewui.core.ray.cluster import connect

    cluster = connect(address, jobs)

    def make(pool: WorktreePool) -> RayExecutor:
        return RayExecutor(pool, cluster, extras, ship_limit)

    return make


def _get(ray: Any, refs: Any) -> Any:
    """`ray.get`, a node's ReviewError (its sandbox refusing) raised as itself, not wrapped."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, ReviewError):
            raise cause from None
        raise
