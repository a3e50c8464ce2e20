"""WarmPytest: pytest runs forked from one warm server instead of started cold.

A bite sweep runs `<python> -m pytest` once per hunk, and a cold run spends
most of its time importing pytest and its plugins (about 0.3 s of 0.45 s on
the development machine) before it tests anything. A WarmPytest starts
`warm_server.py` with the project's Python inside the same bubblewrap sandbox
a cold run gets (allowlisted environment, read-only filesystem, own PID and
network namespaces, limits), one server per scratch slot (the directory
holding the run's cwd, the only one it can write besides its own work area),
and each run is a fork of it: `run_tests(..., warm=server)` uses it for
`<python> -m pytest` commands and falls back to a cold run when the server
cannot serve.

What a cold run guarantees still holds: a slot's server runs one run at a
time, and when that run ends, times out or is cancelled the server kills
every other process of its PID namespace (so `setsid` and double-forked
daemons go too); its output is read through a FIFO into the same capped
buffer; it gets its own environment and HOME; and it imports the code under
test afresh (the server imports only pytest and the plugins installed in
site-packages, never the working tree).
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from typing import Sequence

from reviewui.core import inside
from reviewui.core.run import room, run_uid, sandbox
from reviewui.core.run.command_types import HostProgram
from reviewui.core.run.process import Outcome
from reviewui.core.run.sandbox_env import scrubbed_env
from reviewui.core.run.tempdirs import private_tempdir, remove_tree
from reviewui.core.run.warm_server_host import (OWN_ARGS, OWN_MODULES, PLUGIN_CACHE_INSIDE, READY_WAIT, SERVER_SOURCE,
                                               plugin_cache_dir)
from reviewui.core.run.warm_server_host import Server as _Server
from reviewui.core.run.warm_server_host import copy_pyc as _copy_pyc
from reviewui.core.run.warm_server_host import identity as _identity

__all__ = ["PLUGIN_CACHE_INSIDE", "SERVER_SOURCE", "WarmPytest", "plugin_cache_dir", "warm_form"]

def warm_form(argv: Sequence[str]) -> bool:
    """True for `<python> -m pytest ...`, the form a warm server can run."""
    return len(argv) >= 3 and list(argv[1:3]) == ["-m", "pytest"]


class WarmPytest:
    """Warm pytest servers for one Python, one per scratch slot; safe to use from several threads."""

    def __init__(self, python: HostProgram, *, env_allow: Sequence[str] = (), network: bool = False) -> None:
        self.python = python
        self.env_allow = tuple(env_allow)
        self.network = network
        self._servers: dict[Path, _Server] = {}
        self._lock = threading.Lock()
        self._changed = threading.Condition()
        """Notified when a server becomes ready or fails."""
        self._closed = False
        self._filling = False
        self.cache_filled = threading.Event()
        """Set once a server found its plugins missing from the cache and they were written."""

    @staticmethod
    def _slot(cwd: str | Path) -> Path:
        return Path(cwd).resolve().parent

    def _server(self, cwd: str | Path) -> "_Server":
        slot = self._slot(cwd)
        slot.mkdir(parents=True, exist_ok=True)
        with self._lock:
            server = self._servers.get(slot)
            if server is not None and (server.slot_id != _identity(slot) or not getattr(server, "fits", bool)(cwd)):
                # The slot dir was replaced: the server's bind still shows the old one. A new server.
                server.close()
                server = None
            if server is None:
                server = self._servers[slot] = _Server(self, slot)
                if self._closed:
                    server.close()
            return server

    def prestart(self, cwds: Sequence[str | Path]) -> None:
        """Start the servers for these run directories now (they import pytest while other work runs)."""
        for cwd in cwds:
            self._server(cwd)

    def first_ready(self, cwds: Sequence[str | Path], timeout: float = READY_WAIT) -> int | None:
        """Index in `cwds` of the first whose server is ready (or dead: it answers at once,
        by running cold), waiting up to `timeout`; None when none is by then."""
        servers = [self._server(cwd) for cwd in cwds]
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                done = next((n for n, s in enumerate(servers) if s._ready.is_set()), None)
                left = deadline - time.monotonic()
                if done is not None or left <= 0:
                    return done
                self._changed.wait(left)

    def fill_plugin_cache(self) -> None:
        """Write the rewritten plugin modules into the cache, once, beside the servers.

        A server of its own (`fill-plugin-cache`) imports the plugins, the cache bound
        read-write, and exits: no code under test ever runs where the cache is writable.
        """
        with self._lock:
            if self._filling:
                return
            self._filling = True
        threading.Thread(target=self._fill, name="warm-pytest-cache", daemon=True).start()

    def _fill(self) -> None:
        io = private_tempdir("warm-fill")
        try:
            cache = plugin_cache_dir(self.python)
            home = io / "home"
            home.mkdir()
            written = io / "cache"
            written.mkdir()
            # reviewui's run-side modules too, compiled as a server compiles them (inside/own_code.py)
            inside.place_own(written / OWN_MODULES)
            run_uid.hand_over(io)
            env = sandbox.run_env(scrubbed_env(str(home), allow=self.env_allow, tmpdir=sandbox.run_tmpdir()),
                                  self.python)
            box = sandbox.Box(writable=(io,), chdir=home, limits=sandbox.limits(), python=self.python,
                              placed=((written, PLUGIN_CACHE_INSIDE, True),))
            argv = sandbox.wrap([self.python, "-c", SERVER_SOURCE, "fill-plugin-cache", "--plugin-cache",
                                 PLUGIN_CACHE_INSIDE, *OWN_ARGS], box)
            done = subprocess.run(argv, cwd=home, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=120, start_new_session=True)
            if done.returncode == 0:
                _copy_pyc(written, cache)
        except (OSError, subprocess.SubprocessError):
            pass  # only time is lost: the servers rewrite the plugins as before
        finally:
            remove_tree(io)
            self.cache_filled.set()

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    @property
    def problem(self) -> str | None:
        """Why a server cannot serve, once known (the first one found)."""
        return next((s.problem for s in list(self._servers.values()) if s.problem), None)

    def batching_off(self) -> str | None:
        """"batching off: pytest X.Y moved `…`" when a ready server's pytest lacks a private name the
        batched sweep leans on (then every item runs alone: slower, never wrong), else None."""
        for s in list(self._servers.values()):
            if s._ready.is_set() and s.moved:
                return f"batching off: pytest {s.pytest_version} moved " + ", ".join(f"`{m}`" for m in s.moved)
        return None

    @property
    def running(self) -> bool:
        """True while any server process is up."""
        return any(s.running for s in list(self._servers.values()))

    def accepts(self, argv: Sequence[str]) -> bool:
        """True when this server can run `argv`: `<its python> -m pytest ...`."""
        return warm_form(argv) and argv[0] == self.python and not self._closed

    def work_dir(self, cwd: str | Path) -> Path:
        """A fresh per-run directory the server for `cwd` can see (for HOME, JUnit, the plugins): always
        `<io>/run`, seen at room.RUN as a cold run's is. Held until `release(path)`: two runs in
        one slot at once would share the one path, so the second waits for the first."""
        server = self._server(cwd)
        server.dir_lock.acquire()
        path = server.io / room.RUN_NAME
        try:
            # Nothing the last run wrote anywhere in the io dir (it is writable) survives into this one.
            for entry in list(server.io.iterdir()):
                if entry.name == "home" and entry.is_dir() and not entry.is_symlink():
                    for inner in list(entry.iterdir()):
                        remove_tree(inner) if inner.is_dir() and not inner.is_symlink() else inner.unlink()
                elif entry.is_dir() and not entry.is_symlink():
                    remove_tree(entry)
                else:
                    entry.unlink()
            path.mkdir()
        except BaseException:
            server.dir_lock.release()
            raise
        return path

    def release(self, work: Path) -> None:
        """The run in `work` (from work_dir) is done with it: the next run of its slot may take it."""
        with self._lock:
            server = next((s for s in self._servers.values() if s.io == work.parent), None)
        if server is not None and server.dir_lock.locked():
            server.dir_lock.release()

    def execute(
        self, args: Sequence[str], cwd: str | Path, env: dict[str, str], timeout: float | None,
        cancel: threading.Event | None, cap: int, *, coverage: bool = False,
    ) -> Outcome | None:
        """Run `pytest args` in `cwd` as a fork of its slot's server; None when it cannot (run it cold).

        With `coverage` the fork measures the run with coverage.py (its rcfile
        named by COVERAGE_RCFILE in `env`). Returns what runner._execute
        returns: how the run ended, its capped output, and the limit it passed, if any.
        """
        if self._closed:
            return None
        return self._server(cwd).execute(args, cwd, env, timeout, cancel, cap, coverage)

    def close(self) -> None:
        """Stop every server (runs in flight are killed with them)."""
        with self._lock:
            self._closed = True
            servers = list(self._servers.values())
        for server in servers:
            server.close()
