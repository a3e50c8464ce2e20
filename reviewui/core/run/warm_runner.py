"""WarmPytest: pytest runs forked from one warm server instead of started cold.

A bite sweep runs `<python> -m pytest` once per hunk, and a cold run spends
most of its time importing pytest and its plugins (about 0.3 s of 0.45 s on
the development machine) before it tests anything. A WarmPytest starts
`warm_server.py` once with the project's Python, inside the same sandbox a
cold run gets (scrubbed environment, no network), and each run is a fork
of it: `run_tests(..., warm=server)` uses it for `<python> -m pytest`
commands and falls back to a cold run when the server cannot serve.

What a cold run guarantees still holds: each run is its own process group,
killed whole on timeout, on cancel and after it exits; its output is read
through a FIFO into the same capped buffer; it gets its own environment and
HOME; and it imports the code under test afresh (the server imports only
pytest and the plugins installed in site-packages, never the working tree).
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Sequence

from reviewui.core.run.process import POLL_SECONDS, CappedBuffer, kill_group
from reviewui.core.run.sandbox_env import WARM_OWNER_MARKER, network_isolation_prefix, scrubbed_env

SERVER_SOURCE = (Path(__file__).parent / "warm_server.py").read_text(encoding="utf-8")
READY_WAIT = 60.0
"""Seconds a run waits for the server to finish importing before it runs cold instead."""
REPLY_WAIT = 30.0
"""Seconds a run waits for the server to say it has forked (it answers at once when well)."""


def warm_form(argv: Sequence[str]) -> bool:
    """True for `<python> -m pytest ...`, the form a warm server can run."""
    return len(argv) >= 3 and list(argv[1:3]) == ["-m", "pytest"]


class WarmPytest:
    """One warm pytest server for one Python; safe to use from several threads at once."""

    def __init__(self, python: str, *, env_allow: Sequence[str] = (), network: bool = False) -> None:
        self.python = python
        self._home = Path(tempfile.mkdtemp(prefix="reviewui-warm-"))
        self._ready = threading.Event()
        self._dead = False
        self._boxes: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.problem: str | None = None
        """Why the server cannot serve (it died, or failed to import pytest), once known."""
        argv = [*([] if network else network_isolation_prefix()), python, "-c", SERVER_SOURCE]
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                argv, cwd=self._home,
                env=scrubbed_env(str(self._home), allow=env_allow, extra={WARM_OWNER_MARKER: str(os.getpid())}),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as e:
            self._proc = None
            self._fail(f"cannot start {python}: {e.strerror or e}")
            return
        threading.Thread(target=self._read, name="warm-pytest", daemon=True).start()

    # --- the server's replies ------------------------------------------------

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("ready"):
                self._ready.set()
            elif "id" not in message:
                self.problem = str(message.get("error", "the warm server failed"))
            else:
                box = self._boxes.get(message["id"])
                if box is not None:
                    box.put(message)
        self._fail(self.problem or "the warm server exited")

    def _fail(self, why: str) -> None:
        self.problem = self.problem or why
        self._dead = True
        self._ready.set()
        for box in list(self._boxes.values()):
            box.put({"dead": True})

    @property
    def running(self) -> bool:
        """True while the server process is up."""
        return self._proc is not None and self._proc.poll() is None

    # --- running -------------------------------------------------------------

    def accepts(self, argv: Sequence[str]) -> bool:
        """True when this server can run `argv`: `<its python> -m pytest ...`."""
        return warm_form(argv) and argv[0] == self.python and not self._dead

    def execute(
        self, args: Sequence[str], cwd: str | Path, env: dict[str, str], timeout: float | None,
        cancel: threading.Event | None, cap: int,
    ) -> tuple[int | None, float, bool, bool, str, int] | None:
        """Run `pytest args` in `cwd` as a fork of the server; None when it cannot (run it cold).

        Returns what runner._execute returns: (exit code or None when killed,
        seconds, timed out, cancelled, capped output, total output bytes).
        """
        self._ready.wait(READY_WAIT)
        if self._dead or not self._ready.is_set():
            return None
        work = Path(tempfile.mkdtemp(prefix="reviewui-warmrun-"))
        fifo = work / "output"
        os.mkfifo(fifo, 0o600)
        # Our own write end keeps the reader from seeing end-of-file before the child
        # has opened the FIFO; it is closed once the child has ended.
        read_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        keeper = os.open(fifo, os.O_WRONLY)
        os.set_blocking(read_fd, True)
        buf = CappedBuffer(cap)
        reader = threading.Thread(target=_drain_fd, args=(read_fd, buf), daemon=True)
        reader.start()
        rid = next(self._ids)
        box: queue.Queue[dict[str, Any]] = queue.Queue()
        self._boxes[rid] = box
        pid: int | None = None
        try:
            request = {"id": rid, "cwd": str(Path(cwd).resolve()), "args": list(args), "env": env, "output": str(fifo)}
            if not self._send(request):
                return None
            start = time.monotonic()
            try:
                reply = box.get(timeout=REPLY_WAIT)
            except queue.Empty:
                return None  # a server that does not answer is not waited on: the run goes cold
            if "pid" not in reply:
                return None
            pid = int(reply["pid"])
            deadline = None if timeout is None else start + timeout
            timed_out = cancelled = False
            while True:
                try:
                    reply = box.get(timeout=POLL_SECONDS)
                except queue.Empty:
                    if cancel is not None and cancel.is_set():
                        cancelled = True
                    elif deadline is not None and time.monotonic() > deadline:
                        timed_out = True
                    if cancelled or timed_out:
                        kill_group(pid)
                    continue
                if "exit" in reply:
                    break
                if reply.get("dead"):
                    return None  # the server went away mid-run: the caller runs it cold
            seconds = time.monotonic() - start
            kill_group(pid)  # grandchildren the run left behind go with it
            os.close(keeper)
            keeper = -1
            reader.join(timeout=2.0)
            rc = None if (timed_out or cancelled) else int(reply["exit"])
            return rc, seconds, timed_out, cancelled, buf.text(), buf.total
        finally:
            if pid is not None:
                kill_group(pid)
            if keeper >= 0:
                os.close(keeper)
            self._boxes.pop(rid, None)
            shutil.rmtree(work, ignore_errors=True)

    def _send(self, request: dict[str, Any]) -> bool:
        proc = self._proc
        if proc is None or proc.stdin is None:
            return False
        with self._lock:
            try:
                proc.stdin.write(json.dumps(request).encode() + b"\n")
                proc.stdin.flush()
            except (OSError, ValueError):
                self._fail("the warm server stopped reading")
                return False
        return True

    def close(self) -> None:
        """Stop the server (runs in flight are killed by their callers)."""
        proc = self._proc
        if proc is not None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except OSError:
                pass
            kill_group(proc.pid)
            proc.wait()
        shutil.rmtree(self._home, ignore_errors=True)


def _drain_fd(fd: int, buf: CappedBuffer) -> None:
    with os.fdopen(fd, "rb", buffering=0) as stream:
        buf.drain(stream)
