"""One warm server process, host side: started in the sandbox, fed one run at a time, read back.

`WarmPytest` (warm_runner.py) keeps one `Server` per scratch slot; this module
is how one of them lives: the sandboxed `warm_server.py` process (core/inside/)
and its owner thread, the ready and reply handshakes on its pipe (each line
capped at REPLY_CAP), a run's FIFO drained into its capped buffer, the run's
cgroup marks, and killing what a finished run left. The plugin cache it copies
read-only into its sandbox is here too (`plugin_cache_dir`, `copy_pyc`).
"""

from __future__ import annotations

import hashlib
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
from typing import Any, Protocol, Sequence

from reviewui.core import inside
from reviewui.core.config import user_cache_dir
from reviewui.core.run import interp, room, run_uid, sandbox, storage, tar_stream
from reviewui.core.run.cgroup import RunGroup
from reviewui.core.run.command_types import HostProgram, resolve
from reviewui.core.run.process import POLL_SECONDS, CappedBuffer, Outcome, StopCheck, capped_lines, kill_group
from reviewui.core.run.sandbox_env import WARM_OWNER_MARKER, network_isolation_prefix, scrubbed_env
from reviewui.core.run.tempdirs import io_tempdir, private_tempdir, remove_tree
from reviewui.core.run.watch import DiskWatch, measure

SERVER_SOURCE = inside.source("warm_server.py").read_text(encoding="utf-8")
READY_WAIT = 60.0
"""Seconds a run waits for the server to finish importing before it runs cold instead."""
REPLY_WAIT = 30.0
"""Seconds a run waits for the server to say it has forked (it answers at once when well)."""
KILL_WAIT = 5.0
"""Seconds a killed run's server gets to report it gone before the whole server is killed."""
REPLY_CAP = 1024 * 1024
"""Bytes one line from a server may have: a run that writes into the server's own stdout
(`/proc/<server>/fd/1`) without end is cut off there, and the server with it."""


PLUGIN_CACHE_INSIDE = "/reviewui/plugin-cache"
"""Where a server sees the plugin cache (its host path is under the reviewer's home)."""
OWN_MODULES = "own-modules"
"""The folder of the server's plugin directory holding what it compiles for its runs (inside.place_own):
no absolute path's first part, so never one of the plugin cache's own folders."""
OWN_ARGS = ("--own-modules", f"{PLUGIN_CACHE_INSIDE}/{OWN_MODULES}", "--own-at", f"{room.RUN}/plugin")
"""Where a server finds reviewui's run-side modules and where its runs import their copies from."""


def plugin_cache_dir(python: HostProgram) -> Path:
    """Where the warm servers of `python` keep pytest's rewritten plugin modules (one directory
    per interpreter path: a venv's servers never read what another venv's wrote)."""
    exe = os.path.abspath(resolve(python) or python)
    # With the layout's root in the key: modules compiled where a run sees the venv (interp.py).
    return user_cache_dir() / "plugin-pyc" / hashlib.sha256(f"{exe}\0{interp.PYTHON}".encode()).hexdigest()[:16]


class ServerOwner(Protocol):
    """What a Server needs of the pool that keeps it (warm_runner.WarmPytest), so this module
    never imports the pool: the pool is above its servers."""

    python: HostProgram
    """The interpreter the servers run."""
    env_allow: tuple[str, ...]
    """Variables of the reviewer's environment a run keeps (scrubbed_env)."""
    network: bool
    """Keep the host network (trusted config `network = true`)."""

    def fill_plugin_cache(self) -> None:
        """Write the rewritten plugin modules into the cache, once, beside the servers."""

    def _notify(self) -> None:
        """Wake whoever waits for a server to change state (ready, gone)."""


class Server:
    """One warm server process, sandboxed with write access to one slot directory."""

    def __init__(self, owner: ServerOwner, slot: Path) -> None:
        self._owner = owner
        self.python = owner.python
        self.slot = slot
        self.slot_id = identity(slot)
        """The slot dir's (device, inode) when the server bound it."""
        self.io = io_tempdir()  # named as a cold run's io dir: the mount table shows the same shape
        home = self.io / "home"
        home.mkdir()
        self._ready = threading.Event()
        self._dead = False
        self._boxes: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._send_lock = threading.Lock()
        self._run_lock = threading.Lock()  # one run at a time: the sweep after it may kill everything else
        self.dir_lock = threading.Lock()
        """Held by the run whose directory `<io>/run` is (WarmPytest.work_dir / release)."""
        self.problem: str | None = None
        self.level = sandbox.level()
        if self.level == "bwrap":
            run_uid.hand_over(self.io)  # as root the server and its runs are RUN_UID
        env = scrubbed_env(room.IO + "/home" if self.level == "bwrap" else str(home), allow=owner.env_allow,
                           extra={WARM_OWNER_MARKER: str(os.getpid())},
                           tmpdir=sandbox.run_tmpdir() if self.level == "bwrap" else str(self.io))
        env = sandbox.run_env(env, self.python)
        self.rewrote: int | None = None
        """Plugin modules the server had to rewrite, not finding them in the cache (None: no cache)."""
        self.moved: tuple[str, ...] = ()
        """Private pytest names the batching leans on that this pytest lacks (see warm_server.INTERNALS)."""
        self.pytest_version = ""
        self.own: int | None = None
        """How many of reviewui's plugins and helpers the server compiled once for its runs (None: none)."""
        self.own_compiled: int | None = None
        """How many of those it compiled itself, finding no copy in the plugin cache (the rest it took from there)."""
        self._plugins: Path | None = None
        self.group: RunGroup | None = None
        self.sized = self.level == "bwrap" and storage.level() == "tmpfs"
        """True when each run gets its tree unpacked into the server's sized tmpfs (storage.py)."""
        tree = slot / "tree"
        size, entries = storage.footprint(tree) if tree.is_dir() else (0, 0)
        self.tree_room = size + storage.WARM_SLACK
        """Bytes of the tmpfs for the tree (beyond `disk-limit`): a larger tree needs a new server."""
        self.tree_entries = entries + storage.WARM_FILE_SLACK
        """Its inodes for the tree (beyond `file-limit`): a tree of more entries needs a new server."""
        if self.level == "bwrap":
            # A copy, bound read-only: a bind would name its source (the cache, under the
            # reviewer's home) in the run's mount table.
            self._plugins = private_tempdir("plugins")
            copy_pyc(plugin_cache_dir(owner.python), self._plugins)
            inside.place_own(self._plugins / OWN_MODULES)  # compiled once for every run (own_code.py)
            run_uid.open_to_run(self._plugins)
            # The slot and io dirs at the same fixed paths as every cold run's (room.py); with sized
            # storage the slot is the server's tmpfs, each run's tree unpacked into it.
            lim = sandbox.limits()
            box = sandbox.Box(writable=(), chdir=Path(room.IO + "/home"), network=owner.network,
                              limits=lim, python=owner.python,
                              placed=(*(() if self.sized else ((slot, room.SLOT, True),)), (self.io, room.IO, True),
                                      (self._plugins, PLUGIN_CACHE_INSIDE, False)),
                              scratch_size=self.tree_room + lim.disk if self.sized else 0,
                              scratch_files=storage.warm_inodes(self.tree_entries, lim.files) if self.sized else 0)
            argv = sandbox.wrap([owner.python, "-c", SERVER_SOURCE, "sweep", "--plugin-cache", PLUGIN_CACHE_INSIDE,
                                 *OWN_ARGS], box)
            # One cgroup for the server and the one run it forks at a time: the run's memory and
            # processes are bounded as a whole (counted per run: `mark` before, `hit` after).
            self.group = RunGroup.create(sandbox.limits())
            if self.group is not None:
                argv = [*self.group.prefix(), *argv]
        else:
            argv = [*([] if owner.network else network_isolation_prefix()), owner.python, "-c", SERVER_SOURCE]
        self._proc: subprocess.Popen[bytes] | None = None
        started = threading.Event()
        # bwrap's --die-with-parent follows the *thread* that started it: a thread of its own
        # lives exactly as long as the server, so the server does not die with a finished worker.
        threading.Thread(target=self._own, args=(argv, env, home, started), name="warm-pytest-owner",
                         daemon=True).start()
        started.wait(30)

    def _own(self, argv: list[str], env: dict[str, str], home: Path, started: threading.Event) -> None:
        try:
            self._proc = subprocess.Popen(
                argv, cwd=home, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, start_new_session=True,
            )
        except OSError as e:
            self._fail(f"cannot start {self.python}: {e.strerror or e}")
            started.set()
            return
        started.set()
        self._read()
        self._proc.wait()

    # --- the server's replies ------------------------------------------------

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in capped_lines(self._proc.stdout.fileno(), REPLY_CAP):
            if line is None:
                self.problem = "output limit: a run wrote past the cap into the warm server's reply channel"
                kill_group(self._proc.pid)
                break
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            if message.get("ready"):
                self.rewrote = message.get("rewrote")
                moved = message.get("moved")
                self.moved = tuple(str(m)[:200] for m in moved[:20]) if isinstance(moved, list) else ()
                self.pytest_version = str(message.get("pytest", "?"))[:40]
                self.own, self.own_compiled = _count(message.get("own")), _count(message.get("own_compiled"))
                self._ready.set()
                self._owner._notify()
                if self.rewrote or self.own_compiled:
                    self._owner.fill_plugin_cache()
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
        self._owner._notify()
        for box in list(self._boxes.values()):
            box.put({"dead": True})

    @property
    def running(self) -> bool:
        """True while the server process is up."""
        return self._proc is not None and self._proc.poll() is None

    def fits(self, cwd: str | Path) -> bool:
        """True when the tree at `cwd` fits this server's tmpfs (always, without sized storage)."""
        if not self.sized or not Path(cwd).is_dir():
            return True
        size, entries = storage.footprint(cwd)
        return size <= self.tree_room and entries <= self.tree_entries

    # --- running -------------------------------------------------------------

    def execute(
        self, args: Sequence[str], cwd: str | Path, env: dict[str, str], timeout: float | None,
        cancel: threading.Event | None, cap: int, coverage: bool = False,
    ) -> Outcome | None:
        """See WarmPytest.execute."""
        self._ready.wait(READY_WAIT)
        if self._dead or not self._ready.is_set():
            return None
        with self._run_lock:
            return self._execute(args, cwd, env, timeout, cancel, cap, coverage)

    def _execute(
        self, args: Sequence[str], cwd: str | Path, env: dict[str, str], timeout: float | None,
        cancel: threading.Event | None, cap: int, coverage: bool,
    ) -> Outcome | None:
        work = Path(tempfile.mkdtemp(prefix="fifo-", dir=self.io))
        fifo = work / "output"
        os.mkfifo(fifo, 0o600)
        if self.level == "bwrap":
            run_uid.hand_over(work)  # the run (RUN_UID as root) opens it to write
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
        finished = False
        try:
            made = self._request(rid, args, cwd, env, fifo, coverage)
            if made is None:
                return None  # the tree cannot be packed: the run goes cold
            request, entries = made
            if self.level == "bwrap" and not self.sized:
                run_uid.hand_over(self.slot)  # bound read-write: its tree is the run's to write
            if self.group is not None:
                self.group.mark()
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
            limits = sandbox.limits()
            watch = DiskWatch((self.io,) if self.sized else (self.slot, self.io), limits.disk, limits.files,
                              tmpfs=(room.SLOT, entries) if self.sized else None)
            if self.sized and self._proc is not None:
                watch.follow(self._proc.pid)
            stop = StopCheck(cancel, None if timeout is None else start + timeout, buf, limits.output, watch)
            ended = self._await_end(rid, pid, box, stop)
            if ended is None:
                return None  # the server went away mid-run: the caller runs it cold
            code, reason = ended
            seconds = time.monotonic() - start
            finished = True
            os.close(keeper)
            keeper = -1
            reader.join(timeout=2.0)
            if reason is None and code != 0 and self.group is not None:
                reason = self.group.hit()
            return stop.outcome(reason, code, seconds)
        finally:
            if pid is not None and not finished:
                self._kill(rid, pid)
            if keeper >= 0:
                os.close(keeper)
            self._boxes.pop(rid, None)
            remove_tree(work)

    def _request(self, rid: int, args: Sequence[str], cwd: str | Path, env: dict[str, str], fifo: Path,
                 coverage: bool) -> tuple[dict[str, Any], int] | None:
        """Request `rid` for the server, every path as the run sees it (with sized storage the tree
        packed into the io dir for the server to unpack), and the tree's entry count (0 unsized); None
        when the tree cannot be packed."""
        place = room.Room(Path(cwd).resolve(), self.io / room.RUN_NAME, on=self.level == "bwrap")
        request = {"id": rid, "cwd": place.tree_inside, "args": list(args), "env": env,
                   "output": str(fifo) if self.level != "bwrap" else room.IO + str(fifo)[len(str(self.io)):],
                   "coverage": coverage}
        if not self.sized:
            return request, 0
        tar = self.io / "tree.tar"
        with open(tar, "wb") as f:
            packer = storage.pack(Path(cwd).resolve(), out=f.fileno())
            if packer.wait() != 0:
                return None
        request["tree"] = {"tar": room.IO + "/tree.tar", "exe": tar_stream.tar_path(), "dir": place.tree_inside,
                           "slot": room.SLOT, "home": storage.home_inside()}
        return request, measure([Path(cwd)])[1]

    def _await_end(self, rid: int, pid: int, box: queue.Queue[dict[str, Any]],
                   stop: StopCheck) -> tuple[int | None, str | None] | None:
        """Wait for run `rid` (process `pid`) to end, killing it when `stop` says why: (its exit code,
        None when killed or lost; why it was stopped), or None when the server went away mid-run."""
        reason: str | None = None
        killed_at: float | None = None
        while True:
            try:
                reply = box.get(timeout=POLL_SECONDS)
            except queue.Empty:
                if reason is None:
                    reason = stop.check()
                if reason is not None and killed_at is None:
                    killed_at = time.monotonic()
                    self._kill(rid, pid)
                elif killed_at is not None and time.monotonic() - killed_at > KILL_WAIT:
                    self.close()  # the server did not report the run gone: it goes, and the run with it
                    return None, reason
                continue
            if "exit" in reply:
                return int(reply["exit"]), reason
            if reply.get("dead"):
                if killed_at is not None:
                    return None, reason
                if self.problem and self.problem.startswith("output limit"):
                    return None, "output limit"  # the run flooded the server's own channel
                return None

    def _kill(self, rid: int, pid: int) -> None:
        if self.level == "none":
            kill_group(pid)  # no PID namespace: the pid is ours to kill
        self._send({"kill": rid})

    def _send(self, request: dict[str, Any]) -> bool:
        proc = self._proc
        if proc is None or proc.stdin is None:
            return False
        with self._send_lock:
            try:
                proc.stdin.write(json.dumps(request).encode() + b"\n")
                proc.stdin.flush()
            except (OSError, ValueError):
                self._fail("the warm server stopped reading")
                return False
        return True

    def close(self) -> None:
        """Stop the server (and, in its PID namespace, everything it forked)."""
        self._dead = True
        proc = self._proc
        if proc is not None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except OSError:
                pass
            kill_group(proc.pid)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        remove_tree(self.io)
        if self._plugins is not None:
            remove_tree(self._plugins)
        if self.group is not None:
            self.group.close()


PLUGIN_CACHE_CAP = 64 * 1024 * 1024
"""Bytes of rewritten plugin modules copied at most (a venv's plugins take a few MB)."""


def copy_pyc(src: Path, dest: Path) -> None:
    """Copy the `.pyc` files under `src` into `dest` (same relative paths), never following a
    symlink and stopping at PLUGIN_CACHE_CAP bytes; a missing `src` copies nothing."""
    total = 0
    for path in sorted(src.rglob("*.pyc")) if src.is_dir() else ():
        if path.is_symlink() or not path.is_file():
            continue
        total += path.stat().st_size
        if total > PLUGIN_CACHE_CAP:
            return
        target = dest / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_name(f".{target.name}.{os.getpid()}.part")
        shutil.copyfile(path, part)
        os.replace(part, target)  # a server copying the cache meanwhile never reads half a file


def _count(value: object) -> int | None:
    """A count from a server's message, or None when it is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def identity(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_dev, st.st_ino


def _drain_fd(fd: int, buf: CappedBuffer) -> None:
    with os.fdopen(fd, "rb", buffering=0) as stream:
        buf.drain(stream)
