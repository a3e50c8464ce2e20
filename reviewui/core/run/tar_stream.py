"""The system tar and the line that unpacks a tree inside a cold run (storage.py's sized storage).

Inside a cold run the command starts with `cold_argv`'s shell line, which
unpacks the tree (packed on the host by `storage.pack`) from stdin into the
slot and then execs the command. Below the sandbox, which starts every cold
run with that line, below mountns, which asks whether there is a tar, and
below storage, which decides where runs' writes go. It starts no process.
"""

from __future__ import annotations

import functools
import shutil

UNPACK = '"$1" -xpf - -C "$2" --no-same-owner --delay-directory-restore && shift 2 && exec "$@" </dev/null'
"""The shell line a cold run starts with: unpack the tree from stdin into $1, then run the command."""


@functools.lru_cache(maxsize=1)
def system_tar() -> str | None:
    """The system tar by its system path, else None (then runs get no sized storage)."""
    return shutil.which("tar", path="/usr/bin:/bin")


def cold_argv(tree_inside: str, argv: list[str]) -> list[str]:
    """The argv a cold run starts with inside: unpack stdin into `tree_inside`, then `argv`."""
    # tar by its system path: the run's PATH is the reviewer's, which need not name it.
    return ["/bin/sh", "-c", UNPACK, "sh", tar_path(), tree_inside, *argv]


def tar_path() -> str:
    """The system tar (a run's PATH need not reach it); only asked where storage.level() is "tmpfs"."""
    tar = system_tar()
    assert tar is not None, "no tar: check storage.level() first"
    return tar
