"""The review session's memory between bite sweeps: settled baselines and the warm pytest servers."""

from __future__ import annotations

import threading

from reviewui.core.bite.prepare import Prepared
from reviewui.core.config import Settings
from reviewui.core.run.command_types import host_program
from reviewui.core.run.warm_runner import WarmPytest


class BiteCache:
    """Baselines and instrument checks already done, keyed by head, command and selection,
    and the warm pytest servers of the session (stopped by `close()`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[tuple[object, ...], Prepared] = {}
        self._warm: dict[tuple[object, ...], WarmPytest] = {}

    def warm_server(self, python: str, settings: Settings) -> WarmPytest | None:
        """The warm pytest server for `python` (the trusted test command's) under these settings'
        sandbox (started once); None when `python` is no host program (a file of the tree: it
        runs cold, in the sandbox only)."""
        program = host_program(python)
        if program is None:
            return None
        key = (program, tuple(settings.env_allow), settings.network)
        with self._lock:
            server = self._warm.get(key)
            if server is None:
                server = self._warm[key] = WarmPytest(program, env_allow=settings.env_allow, network=settings.network)
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

    def get(self, key: tuple[object, ...]) -> Prepared | None:
        with self._lock:
            return self._items.get(key)

    def put(self, key: tuple[object, ...], value: Prepared) -> None:
        with self._lock:
            self._items[key] = value
