"""The system tar, both ends of a tree's trip into a run's sized storage (storage.py).

On the host `pack` writes the tree as a tar stream; inside a cold run the
command starts with `cold_argv`'s shell line, which unpacks it into the slot
and then execs the command (a warm server unpacks it before it forks). Below
the sandbox, which starts every cold run with that line, and below storage,
which decides where runs' writes go.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

UNPACK = '"$1" -xpf - -C "$2" --no-same-owner --delay-directory-restore && shift 2 && exec "$@" </dev/null'
"""The shell line a cold run starts with: unpack the tree from stdin into $1, then run the command."""


@functools.lru_cache(maxsize=1)
def system_tar() -> str | None:
    """The system tar by its system path, else None (then runs get no sized storage)."""
    return shutil.which("tar", path="/usr/bin:/bin")


def pack(tree: str | Path, out: int | None = None) -> subprocess.Popen[bytes]:
    """`tar` writing the tree (mtimes to the nanosecond, modes, symlinks as symlinks) to its stdout,
    or to the file descriptor `out`."""
    tar = system_tar()
    assert tar is not None, "pack() without tar: check storage.level() first"
    return subprocess.Popen([tar, "--format=posix", "-C", str(tree), "-cf", "-", "."],
                            stdout=subprocess.PIPE if out is None else out, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)


def cold_argv(tree_inside: str, argv: list[str]) -> list[str]:
    """The argv a cold run starts with inside: unpack stdin into `tree_inside`, then `argv`."""
    # tar by its system path: the run's PATH is the reviewer's, which need not name it.
    return ["/bin/sh", "-c", UNPACK, "sh", tar_path(), tree_inside, *argv]


def tar_path() -> str:
    """The system tar (a run's PATH need not reach it); only asked where storage.level() is "tmpfs"."""
    tar = system_tar()
    assert tar is not None, "no tar: check storage.level() first"
    return tar
