"""reviewui's temp dirs, named with the owner's pid so the next start can remove a killed run's.

`private_tempdir("bite")` makes `<tmp>/reviewui-bite-<pid>-XXXX`. The first call
in a process removes every `reviewui-<kind>-<pid>-*` dir whose pid is no longer
alive (a reviewui killed with SIGKILL never ran its `finally`), in the temp dir
and in the memory root below, and a process that exits normally removes the ones
it still has (a daemon thread's, say).

A run's io dir (`io_tempdir`: its requests, reports, plugin copies and HOME, written
and read back within the run, then removed) is made on a memory filesystem instead
(`memory_root`: /dev/shm where it is a tmpfs with MEMORY_ROOM free), unless the
reviewer named a temp dir (TMPDIR, TEMP or TMP). On a disk each file made there
cost 0.2-0.8 ms, a few per graded fork: 7-10 % of a guard sweep
(bench/README.md, session 27). What a run writes there is bounded as on a disk
(watch.py: `disk-limit`, `file-limit`), and in a memory cgroup it counts against
the run's `memory-limit`.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import stat
import tempfile
import threading
from pathlib import Path

from reviewui.core.run.nesting import INSIDE_VAR

_NAME = re.compile(r"^reviewui-[a-z][a-z-]*?-(\d+)-")
MEMORY_CANDIDATE = "/dev/shm"
"""The memory filesystem looked for: every Linux has one, world-writable with the sticky bit as /tmp."""
MEMORY_ROOM = 4 * 1024 ** 3
"""Bytes the memory root must have free when a dir is made there: two runs at the default `disk-limit`
(a container's 64 MiB /dev/shm never qualifies, and its runs' io dirs stay on the disk)."""
_TEMP_VARS = ("TMPDIR", "TEMP", "TMP")
_swept = False
_lock = threading.Lock()
_live: set[Path] = set()
"""This process's temp dirs not removed yet (removed at exit)."""
_live_lock = threading.Lock()  # not _lock: the first private_tempdir removes stale dirs holding that one


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_tree(path: str | Path) -> None:
    """Remove a directory a hostile run wrote into (read-only dirs included); never follows symlinks."""

    top = os.path.abspath(path)

    def onerror(func: object, p: str, exc: object) -> None:
        if isinstance(exc, tuple) and len(exc) > 1 and isinstance(exc[1], FileNotFoundError):
            return  # already gone (a second close): nothing to force
        try:
            parent = os.path.dirname(os.path.abspath(p))
            if parent != top and not parent.startswith(top + os.sep):
                return  # never touch what holds the tree (its parent is /tmp itself)
            os.chmod(parent, stat.S_IRWXU)
            if os.path.isdir(p) and not os.path.islink(p):
                os.chmod(p, stat.S_IRWXU)
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.unlink(p)
        except OSError:
            pass

    shutil.rmtree(path, onerror=onerror)
    with _live_lock:
        _live.discard(Path(path))


def sweep_stale(root: str | Path | None = None) -> int:
    """Remove temp dirs left by reviewui processes that are gone from `root` (default: every one of
    `temp_roots`); return how many.

    Nothing inside a sandboxed run (reviewui's own suite runs reviewui): its /tmp
    is private, and the only reviewui dirs there are the outer run's own, bound
    in, whose owner is no process of this PID namespace: not stale, but alive.
    """
    if os.environ.get(INSIDE_VAR) == "1":
        return 0
    if root is None:
        return sum(sweep_stale(r) for r in temp_roots())
    base = Path(root)
    removed = 0
    try:
        entries = list(base.iterdir())
    except OSError:
        return 0
    for entry in entries:
        m = _NAME.match(entry.name)
        if not m or int(m.group(1)) == os.getpid() or _alive(int(m.group(1))):
            continue
        if entry.is_dir() and not entry.is_symlink():
            remove_tree(entry)
            removed += 1
    return removed


_fs_types: dict[str, str] = {}
"""Each path's filesystem type, read once: every run's host-program check asks (command_types.py)."""


def _fs_type(path: str) -> str:
    """The filesystem type of the mount holding `path` (a resolved path), "" when unknown."""
    known = _fs_types.get(path)
    if known is None:
        known = _fs_types[path] = _mount_type(path)
    return known


def _mount_type(path: str) -> str:
    """`_fs_type` read from this process's mount table."""
    best, kind = -1, ""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            rows = f.read().splitlines()
    except OSError:
        return ""
    for row in rows:
        fields, _, rest = row.partition(" - ")
        parts = fields.split()
        if len(parts) < 5 or not rest:
            continue
        point = parts[4].replace("\\040", " ")
        if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) > best:
            best, kind = len(point), rest.split()[0]
    return kind


def memory_root() -> str | None:
    """The memory filesystem a run's io dir is made in (`io_tempdir`), or None: the reviewer named a temp dir,
    or MEMORY_CANDIDATE is not a tmpfs this process can make private dirs in with MEMORY_ROOM free."""
    if any(os.environ.get(var) for var in _TEMP_VARS):
        return None
    path = os.path.realpath(MEMORY_CANDIDATE)
    try:
        st = os.stat(path)
        free = os.statvfs(path)
    except OSError:
        return None
    shared_safely = bool(st.st_mode & stat.S_ISVTX) or (st.st_uid == os.getuid() and not st.st_mode & 0o077)
    if (not stat.S_ISDIR(st.st_mode) or not shared_safely or not os.access(path, os.W_OK | os.X_OK)
            or free.f_bavail * free.f_frsize < MEMORY_ROOM):
        return None
    return path if _fs_type(path) == "tmpfs" else None


def temp_roots() -> tuple[Path, ...]:
    """Every directory reviewui makes its temp dirs in: the temp dir, and the memory root if any."""
    roots = [Path(tempfile.gettempdir())]
    memory = memory_root()
    if memory is not None and Path(memory) not in roots:
        roots.append(Path(memory))
    return tuple(roots)


def io_tempdir() -> Path:
    """A fresh io dir for one run (or one warm server's runs): `reviewui-run-<pid>-XXXX` in the memory
    root where there is one, else in the temp dir (see the module docstring)."""
    return private_tempdir("run", memory_root())


def private_tempdir(kind: str, where: str | Path | None = None) -> Path:
    """A fresh temp dir of this process (`kind` is a lower-case word) in `where` (default the temp
    dir); stale ones are swept first (in every one of `temp_roots`)."""
    global _swept
    with _lock:
        if not _swept:
            _swept = True
            sweep_stale()
    made = Path(tempfile.mkdtemp(prefix=f"reviewui-{kind}-{os.getpid()}-", dir=where))
    with _live_lock:
        _live.add(made)
    return made


@atexit.register
def _remove_live() -> None:
    """At a normal exit, this process's temp dirs go (what a daemon thread still held included)."""
    with _live_lock:
        left = list(_live)
    for path in left:
        shutil.rmtree(path, ignore_errors=True)
