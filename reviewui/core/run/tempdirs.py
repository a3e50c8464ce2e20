"""reviewui's temp dirs, named with the owner's pid so the next start can remove a killed run's.

`private_tempdir("run")` makes `<tmp>/reviewui-run-<pid>-XXXX`. The first call
in a process removes every `reviewui-<kind>-<pid>-*` dir whose pid is no longer
alive (a reviewui killed with SIGKILL never ran its `finally`), and a process
that exits normally removes the ones it still has (a daemon thread's, say).
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
    """Remove temp dirs left by reviewui processes that are gone; return how many.

    Nothing inside a sandboxed run (reviewui's own suite runs reviewui): its /tmp
    is private, and the only reviewui dirs there are the outer run's own, bound
    in, whose owner is no process of this PID namespace: not stale, but alive.
    """
    if os.environ.get(INSIDE_VAR) == "1":
        return 0
    base = Path(root or tempfile.gettempdir())
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


def private_tempdir(kind: str, where: str | Path | None = None) -> Path:
    """A fresh temp dir of this process (`kind` is a lower-case word) in `where` (default the temp
    dir); stale ones are swept first."""
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
