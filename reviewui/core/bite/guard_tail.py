"""The shared tail of a sweep's guard batches: guards every session collects, each taken by
whichever session has finished its own guards first.

The slots of a sweep seldom finish together: one session starts later (its
slot ran the instrument check), or its forks run slower. Split once and for
all, the sweep waits for the slower one while the other core idles. So about a
quarter of the guards are held back in a `Tail`; every session collects their
tests too (from as few files as the share allows, so little is collected
twice) and, after its own guards, asks for the next one over a unix socket
in its run directory (`TailServer`), until none is left. A session that
never asks leaves its share to the others; what no session took runs the
ordinary way once the last session is done (`Tail.finish`).
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from reviewui.core.bite.guard_check import BatchGuard

TAIL_SHARE = 0.25
"""Part of the batchable guards held back for whichever session is free first."""
MIN_GUARDS = 8
"""Below this many batchable guards there is nothing worth balancing."""
SOCKET_NAME = "tail.sock"


def take_tail(guards: list[BatchGuard], sessions: int) -> tuple[list[BatchGuard], list[BatchGuard]]:
    """(guards dealt to the sessions, guards held back as the tail), each in plan order.

    The tail comes from the files with the most guards, so that few test files are collected
    by every session; none with a single session or only a few guards.
    """
    want = int(len(guards) * TAIL_SHARE)
    if sessions < 2 or len(guards) < MIN_GUARDS or want < 1:
        return list(guards), []
    groups: dict[str, list[BatchGuard]] = {}
    for g in guards:
        groups.setdefault(g.job.guard.file, []).append(g)
    held: set[int] = set()
    for group in sorted(groups.values(), key=len, reverse=True):
        room = want - len(held)
        if room <= 0:
            break
        held |= {id(g) for g in group[-room:]}  # a file's last guards: its first ones stay dealt
    return [g for g in guards if id(g) not in held], [g for g in guards if id(g) in held]


class Tail:
    """Guards held back for whichever of `sessions` sessions is free first; thread-safe."""

    def __init__(self, guards: list[BatchGuard], sessions: int) -> None:
        self.guards = guards
        self._next = 0
        self._open = sessions
        self._lock = threading.Lock()

    @property
    def tests(self) -> list[str]:
        """Every test the tail's guards need: each session collects them."""
        return list(dict.fromkeys(t for g in self.guards for t in g.job.tests))

    def take(self) -> int | None:
        """Index of the next guard nobody has taken, or None when all are taken."""
        with self._lock:
            if self._next >= len(self.guards):
                return None
            self._next += 1
            return self._next - 1

    def finish(self) -> list[BatchGuard]:
        """Called once by each session when it is done: the last one gets what nobody took."""
        with self._lock:
            self._open -= 1
            if self._open > 0:
                return []
            left, self._next = self.guards[self._next:], len(self.guards)
            return left


class TailServer:
    """Hands one session the tail's guards, one per request, over a unix socket.

    The session (guard_batch_child.py) writes a line to ask and reads one JSON line back: a
    guard request like those of its own list (its `id` numbered on from `first_id`) or `{}`
    when none is left. Only the first connection is served, and only with guards: nothing a
    run sends is read beyond a bounded line.
    """

    def __init__(self, tail: Tail, path: Path, first_id: int, encode: Callable[[BatchGuard, int], dict[str, Any]],
                 timeout: float) -> None:
        self.tail = tail
        self.path = path
        self.served: dict[int, int] = {}
        """Reply id -> index in the tail of each guard handed out."""
        self._first_id = first_id
        self._encode = encode
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.bind(str(path))  # raises OSError for a path too long for a unix socket
            self._sock.listen(1)
        except OSError:
            self._sock.close()
            raise
        self._sock.settimeout(timeout)
        self._timeout = timeout
        self._thread = threading.Thread(target=self._serve, name="guard-tail", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self._sock.accept()
        except OSError:
            return  # closed: the session ended without asking
        with conn:
            conn.settimeout(self._timeout)
            stream = conn.makefile("rwb")
            try:
                while stream.readline(256):
                    k = self.tail.take()
                    if k is None:
                        stream.write(b"{}\n")
                    else:
                        rid = self._first_id + len(self.served)
                        self.served[rid] = k
                        stream.write(json.dumps(self._encode(self.tail.guards[k], rid)).encode() + b"\n")
                    stream.flush()
            except OSError:
                pass  # the session is gone: what it was handed and did not answer runs the ordinary way

    def close(self) -> None:
        """Stop serving (the session has ended); `served` is final after this."""
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        self._thread.join(timeout=5.0)
