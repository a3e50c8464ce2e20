"""One Ray node's worker: a long-lived actor that runs its share of sweep plans with the local machinery.

It imports nothing of Ray (cluster.py wraps the class as an actor), so it
is plain code: for each shipped tree it unpacks it once into a node-local
directory and makes a repository of it (tree.unpack_repo); for each sweep it
opens a WorktreePool of its own on that repository, its own warm server,
and runs what the driver sends it through the local executor's paths
(executor_local.run_session: sessions keep their batching and their tail;
fallback.run_alone: the one fallback path). Every run goes through the
node's own sandboxed runner: the node checks its sandbox first
(sandbox.require) and refuses every sweep when it has none, as reviewui
does on one machine.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import threading
from pathlib import Path
from typing import Any

from reviewui.core.bite.cache import BiteCache
from reviewui.core.bite.executor import SweepJob
from reviewui.core.bite.executor_local import run_session
from reviewui.core.bite.fallback import run_alone
from reviewui.core.bite.guard_tail import Tail
from reviewui.core.bite.head_files import HeadFiles
from reviewui.core.bite.instrument import UntrustedCommand
from reviewui.core.bite.runctx import RunContext
from reviewui.core.errors import ReviewError, SandboxError
from reviewui.core.ray import tree
from reviewui.core.ray.wire import Back, Decoder, ItemWire, NodeShare, NodeSpec
from reviewui.core.run import sandbox
from reviewui.core.run.tempdirs import private_tempdir
from reviewui.core.run.warm_runner import warm_form
from reviewui.core.run.alike import AlikeRuns
from reviewui.core.run.worktree import WorktreePool
from reviewui.core.target import Target


class NodeSweep:
    """One sweep's state on a node: its pool, warm server, run context and share of the plan."""

    def __init__(self, repo: Path, head: str, spec: NodeSpec, share: NodeShare, kept: Kept) -> None:
        self.kept = kept
        self.pool, self.cache = kept.pool, kept.cache
        self.cancel = threading.Event()
        self.work = private_tempdir("node")
        target = Target(repo, repo / ".git", "head", head, head, "head", 0)
        diff = spec.diff.rebuild(repo, head)
        self.decoder = Decoder(diff)
        self.pool.look_alike(AlikeRuns.of(diff, head))  # as the reviewer's own sweep does (run/alike.py)
        s = spec.settings
        warm = self.cache.warm_server(spec.argv[0], s) if s.warm_runner and warm_form(spec.argv) else None
        if warm is not None:
            warm.prestart([sc.path for sc in self.pool.scratches])
        ctx = RunContext(spec.argv, spec.user_env, spec.modules, s, self.work, self.cancel, warm, spec.data_files,
                         spec.checkout_dirs, spec.suite, spec.quarantined)
        self.job = SweepJob(target, diff, ctx, spec.per_run, HeadFiles(target).text)
        self.head_tests = spec.head_tests
        self.green_key: tuple[object, ...] = (tuple(spec.argv), tuple(sorted(spec.user_env.items())),
                                              spec.head_tests, tuple(s.env_allow), s.network, spec.quarantined)
        """What makes this node's head check the same as an earlier one of the same tree (Node._green)."""
        self.sessions = [self.decoder.session(w) for w in share.sessions]
        held = [self.decoder.batch(w) for w in share.tail]
        self.tail = Tail(held, len(self.sessions)) if held and self.sessions else None
        self.key = ""
        """The tree this sweep runs on."""

    def close(self) -> None:
        """End the sweep: its runs stopped, its work dir removed (the slots and warm server are kept)."""
        self.cancel.set()
        shutil.rmtree(self.work, ignore_errors=True)


class Kept:
    """A tree's slots and warm servers, kept between sweeps of that tree (as a review session's
    BiteCache keeps them on one machine): the next `b` on the same head starts warm."""

    def __init__(self, repo: Path, slots: int) -> None:
        self.slots = slots
        self.pool = WorktreePool(repo, slots)
        self.pool.open()
        self.cache = BiteCache()

    def close(self) -> None:
        """Stop the warm servers (their sandboxes and every fork in them), empty the slots."""
        self.cache.close()
        self.pool.close()


KEEP_TREES = 4
"""Trees whose slots a node keeps open between sweeps (the oldest idle one goes beyond this)."""


class Node:
    """The actor's body (see the module docstring); every method may run beside the others."""

    def __init__(self, unsandboxed: bool = False) -> None:
        sandbox.allow_unsandboxed(unsandboxed)
        self._hide_ray()
        self._lock = threading.Lock()
        self._trees: dict[str, tuple[Path, str]] = {}
        self._sweeps: dict[str, NodeSweep] = {}
        self._idle: dict[str, list[Kept]] = {}
        self._green: set[tuple[object, ...]] = set()
        """(tree, NodeSweep.green_key) of every head check that passed here: this node's baselines,
        cached per head as a review session caches the local one."""
        self._root = Path(tempfile.mkdtemp(prefix=f"reviewui-node-{os.getpid()}-"))

    @staticmethod
    def _hide_ray() -> None:
        """Register Ray's own directories (session, logs, sockets) as hidden from every run."""
        with contextlib.suppress(Exception):
            import ray

            node: Any = ray._private.worker.global_worker.node
            sandbox.hide(node.get_session_dir_path(), node.get_temp_dir_path())

    def check(self) -> tuple[str, str | None]:
        """(this node's host name, why it refuses to run agent code, or None when its sandbox works)."""
        try:
            sandbox.require()
        except ReviewError as e:  # SandboxError included
            return socket.gethostname(), str(e)
        return socket.gethostname(), None

    def load(self, key: str, data: bytes) -> str:
        """Unpack the shipped tree `key` (once) and return its commit."""
        with self._lock:
            if key not in self._trees:
                dest = self._root / key[:16]
                shutil.rmtree(dest, ignore_errors=True)
                self._trees[key] = (dest / "tree", tree.unpack_repo(data, dest))
            return self._trees[key][1]

    def begin(self, sweep: str, key: str, spec: NodeSpec, share: NodeShare, slots: int) -> None:
        """Open sweep `sweep` on tree `key` with `slots` scratch slots; SandboxError when this node has
        no sandbox (the driver checked, but a node is asked again before it runs anything)."""
        _, refusal = self.check()
        if refusal is not None:
            raise SandboxError(f"node {socket.gethostname()}: {refusal}")
        with self._lock:
            repo, head = self._trees[key]
            idle = self._idle.get(key, [])
            kept = next((k for k in idle if k.slots == slots), None)
            if kept is not None:
                idle.remove(kept)
        try:
            state = NodeSweep(repo, head, spec, share, kept or Kept(repo, slots))
        except BaseException:
            if kept is not None:
                kept.close()
            raise
        with self._lock:
            self._sweeps[sweep] = state
        state.key = key

    def control(self, sweep: str) -> UntrustedCommand | None:
        """Check this node before its grades count: the plan's tests green at the head here (a
        node whose environment fails them would make every revert bite; the controls ride among
        its items). The UntrustedCommand that gave, else None."""
        s = self._sweeps[sweep]
        key = (s.key, s.green_key)
        with self._lock:
            known = key in self._green
        red = None if known else _head_red(s)
        if red is not None:
            return UntrustedCommand(f"node {socket.gethostname()}: the tests are not green at the head there "
                                    f"({red}); no grade from that node could be believed")
        if not known and not s.cancel.is_set():
            with self._lock:
                self._green.add(key)
        return None

    def session(self, sweep: str, n: int) -> list[Back]:
        """Run this node's session `n`, then what it gave back alone."""
        s = self._sweeps[sweep]
        return [s.decoder.back(r) for r in run_session(s.pool, s.job, s.sessions[n], s.tail)]

    def alone(self, sweep: str, wire: ItemWire) -> list[Back]:
        """Run one item alone in a fresh scratch."""
        s = self._sweeps[sweep]
        item = s.decoder.item(wire)
        return [s.decoder.back(run_alone(s.pool, s.job, item))]

    def cancel(self, sweep: str) -> None:
        """Stop sweep `sweep`: running process trees are killed (the warm server's sandbox with them)."""
        with self._lock:
            s = self._sweeps.get(sweep)
        if s is not None:
            s.cancel.set()
            s.cache.close()

    def end(self, sweep: str) -> None:
        """Close sweep `sweep`; its tree's slots and warm server are kept for the next sweep of it."""
        with self._lock:
            s = self._sweeps.pop(sweep, None)
        if s is None:
            return
        s.close()
        with self._lock:
            self._idle.setdefault(s.key, []).append(s.kept)
            gone = self._evict()
        for k in gone:
            k.close()

    def _evict(self) -> list[Kept]:
        """The kept slots beyond KEEP_TREES trees (oldest first), taken out (call with the lock)."""
        gone: list[Kept] = []
        while len([t for t, ks in self._idle.items() if ks]) > KEEP_TREES:
            oldest = next(t for t, ks in self._idle.items() if ks)
            gone += self._idle.pop(oldest)
        return gone

    def forget(self) -> None:
        """Remove every unpacked tree (the actor is about to go)."""
        with self._lock:
            sweeps, self._sweeps = list(self._sweeps.values()), {}
            kept = [k for ks in self._idle.values() for k in ks] + [s.kept for s in sweeps]
            self._idle.clear()
            self._trees.clear()
        for s in sweeps:
            s.close()
        for k in kept:
            k.close()
        shutil.rmtree(self._root, ignore_errors=True)


def _head_red(s: NodeSweep) -> str | None:
    """Why the plan's tests are not green at the head on this node, or None when they are."""
    if s.cancel.is_set():
        return None
    with s.pool.acquire() as scratch:
        scratch.checkout(s.job.target.head)
        seen = s.job.ctx.run(scratch.path, s.head_tests, s.job.per_run)
    run = seen.run
    if run.cancelled:
        return None
    if seen.foreign:
        return seen.foreign
    if run.returncode == 0:
        return None
    failed = [t.id for t in run.tests if t.outcome in ("failed", "error")]
    return ", ".join(failed[:3]) + (f" and {len(failed) - 3} more" if len(failed) > 3 else "") if failed \
        else f"exit code {run.returncode}"
