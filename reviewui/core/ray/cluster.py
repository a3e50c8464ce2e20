"""The connection to a Ray cluster and its node actors: made once per process, shared by every sweep.

`connect(address)` joins the cluster at `address`, or without one starts a
local Ray on loopback only (no dashboard, every port on 127.0.0.1: Ray
otherwise publishes the machine's outward address). It places one Node actor
(node.py) on each alive node that has CPUs, pinned there, and asks each to
check its sandbox: one node without it and the engine refuses, naming it.
A node's slots are its CPUs (`jobs` caps them). Trees are shipped once per
content (`ray.put`), unpacked once per node.

Ray is imported here only, lazily: reviewui without the `ray` extra says one
line (`need_ray`) and exits 2.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from dataclasses import dataclass
from typing import Any

from reviewui.core.errors import ReviewError, SandboxError
from reviewui.core.ray.tree import Shipped

CONNECT_WAIT = 10.0
"""Seconds a cluster address has to accept a connection."""
INSTALL_HINT = "the ray engine needs `pip install 'reviewui[ray]'`"
LOOPBACK = "127.0.0.1"
_LOCAL_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Set to 0 before Ray is imported, Ray takes loopback as this machine's address (its own switch)."""


def need_ray(local: bool = False) -> Any:
    """The `ray` module, or ReviewError (exit 2) with the install line. `local`: Ray as loopback only."""
    if local:
        os.environ.setdefault(_LOCAL_ONLY, "0")  # read by Ray at import; nodes inherit it (scrubbed from runs)
    try:
        import ray
    except ImportError:
        raise ReviewError(INSTALL_HINT) from None
    if local:  # imported earlier in this process, before the variable: the same switch, set now
        with contextlib.suppress(AttributeError, ImportError):
            import ray._private.ray_constants as constants

            constants.ENABLE_RAY_CLUSTER = False
    return ray


def _loopback(address: str | None) -> bool:
    """True for no address (a local Ray) or one on this machine's loopback."""
    if address is None:
        return True
    host = address.split("://", 1)[-1].rpartition(":")[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class NodeRef:
    """One node of the cluster and the actor placed on it."""

    node_id: str
    host: str
    slots: int
    actor: Any


class RayCluster:
    """A connected cluster and its node actors (see the module docstring)."""

    def __init__(self, ray: Any, nodes: list[NodeRef], started: bool) -> None:
        self.ray = ray
        self.nodes = nodes
        self.started = started
        """True when this process started the (local) Ray itself."""
        self._shipped: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def slots(self) -> int:
        """Sessions the whole cluster can run at once."""
        return sum(n.slots for n in self.nodes)

    def ship(self, shipped: Shipped) -> Any:
        """The object ref of `shipped` in the object store (put once per content), after every
        node has unpacked it."""
        with self._lock:
            ref = self._shipped.get(shipped.key)
            if ref is None:
                ref = self._shipped[shipped.key] = self.ray.put(shipped.data)
        loads = [(n, n.actor.load.remote(shipped.key, ref)) for n in self.nodes]
        for node, load in loads:
            try:
                self.ray.get(load)
            except self.ray.exceptions.RayActorError:  # a node gone since: the sweeps go on without it
                with self._lock:
                    self.nodes = [n for n in self.nodes if n is not node]
        if not self.nodes:
            raise ReviewError("no node of the Ray cluster is left (each one died)")
        return ref

    def close(self) -> None:
        """Remove the nodes' trees, end the actors (and the local Ray when this process started it)."""
        for n in self.nodes:
            try:
                self.ray.get(n.actor.forget.remote(), timeout=30)
            except Exception:  # a node that went away has nothing to remove
                pass
            self.ray.kill(n.actor)
        if self.started:
            self.ray.shutdown()


_lock = threading.Lock()
_current: dict[str | None, RayCluster] = {}


def connect(address: str | None, jobs: int | None = None) -> RayCluster:
    """The cluster at `address` (None: a local Ray on loopback), connected once per process."""
    with _lock:
        found = _current.get(address)
        if found is None:
            found = _current[address] = _connect(address, jobs)
        return found


def disconnect() -> None:
    """Close every cluster this process connected to (tests, the end of a queue sweep)."""
    with _lock:
        clusters = list(_current.values())
        _current.clear()
    for c in clusters:
        c.close()


def _reachable(address: str) -> None:
    """ReviewError when `host:port` does not accept a connection within seconds (Ray itself retries
    for minutes); other forms (`auto`, `ray://…`) are left to Ray."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_WAIT).close()
    except OSError as e:
        raise ReviewError(f"cannot connect to Ray at {address}: {e.strerror or e}") from None


def _connect(address: str | None, jobs: int | None) -> RayCluster:
    ray = need_ray(local=_loopback(address))
    started = False
    if not ray.is_initialized():
        if address is not None:
            _reachable(address)
        try:
            if address is None:
                ray.init(include_dashboard=False, _node_ip_address=LOOPBACK, log_to_driver=False,
                         configure_logging=False, num_cpus=os.cpu_count() or 1)
                started = True
            else:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        except Exception as e:  # Ray's own errors: ConnectionError, RuntimeError, ValueError…
            raise ReviewError(f"cannot connect to Ray at {address or 'a local Ray'}: {_line(e)}") from None
    return RayCluster(ray, _place(ray, jobs), started)


def _place(ray: Any, jobs: int | None) -> list[NodeRef]:
    """One Node actor pinned on each alive node with CPUs, each asked to check its sandbox."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from reviewui.core.ray.node import Node
    from reviewui.core.run import sandbox

    alive = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= 1]
    if not alive:
        raise ReviewError("the Ray cluster has no node with a CPU")
    remote = ray.remote(Node)
    nodes = []
    for n in alive:
        slots = int(n["Resources"]["CPU"])
        slots = min(slots, jobs) if jobs else slots
        actor = remote.options(num_cpus=0, max_concurrency=slots + 4, scheduling_strategy=NodeAffinitySchedulingStrategy(
            n["NodeID"], soft=False)).remote(sandbox.opted_in())
        nodes.append(NodeRef(n["NodeID"], n.get("NodeManagerAddress", "?"), slots, actor))
    checks = ray.get([n.actor.check.remote() for n in nodes])
    for n, (host, refusal) in zip(nodes, checks, strict=True):
        if refusal is not None:
            for m in nodes:
                ray.kill(m.actor)
            raise SandboxError(f"Ray node {host} ({n.node_id[:8]}) refuses: {refusal}")
    return nodes


def _line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
