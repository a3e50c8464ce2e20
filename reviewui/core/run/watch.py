"""What a running test adds to the directories it may write: bytes and files, watched against the limits.

A run's io dir (and, where no sized tmpfs can be had, its scratch tree:
`storage.py`) are host directories bound into its sandbox (reviewui writes
requests there and reads reports back), so no tmpfs size bounds them. In a
sized tmpfs the bytes are bounded by its size; its files are counted here
from its statfs (`tmpfs_entries`). `DiskWatch` measures them when the run starts and
again every `interval` seconds while it runs; the caller kills the run once
it has added more than `disk` bytes or `files` files, and grades it
`broken` ("disk limit" / "file limit"). RLIMIT_FSIZE bounds each single
file in the meantime, so what a run can add between two looks is bounded
by what it can write in `interval`.

The walk never follows a symlink and stops as soon as a limit is passed,
so a tree of a million files costs one look, not a million stats per look.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Iterator, Sequence

INTERVAL = 0.2
"""Seconds between two looks at a running test's directories."""


def entries(dirs: Sequence[str | Path]) -> Iterator[os.stat_result]:
    """The stat of every entry under `dirs`, depth first, never following a symlink; a part
    that cannot be read is passed over."""
    stack = [str(d) for d in dirs]
    while stack:
        top = stack.pop()
        try:
            it = os.scandir(top)
        except OSError:
            continue
        with it:
            for entry in it:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    stack.append(entry.path)
                yield st


def measure(dirs: Sequence[str | Path], stop_bytes: int | None = None,
            stop_files: int | None = None) -> tuple[int, int]:
    """(allocated bytes, entries) under `dirs`, not following symlinks; stops early past a stop value."""
    total = count = 0
    seen: set[tuple[int, int]] = set()
    for st in entries(dirs):
        key = (st.st_dev, st.st_ino)
        if key in seen:
            continue  # a hard link counts once
        seen.add(key)
        count += 1
        total += st.st_blocks * 512
        if (stop_bytes is not None and total > stop_bytes) or (stop_files is not None and count > stop_files):
            return total, count
    return total, count


def sandbox_child(pid: int) -> int | None:
    """The first child of process `pid` (bwrap's: the process that holds the sandbox's mounts), or None."""
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return int(kids[0]) if kids else None
    except (OSError, ValueError):
        pass
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 1 and fields[1] == str(pid):
                return int(entry.name)
    return None


def tmpfs_entries(pid: int, inside: str) -> int | None:
    """Inodes in use on the tmpfs mounted at `inside` in the sandbox of bwrap process `pid`
    (one statfs, whatever the number of files), or None when it cannot be read."""
    child = sandbox_child(pid)
    if child is None:
        return None
    try:
        st = os.statvfs(f"/proc/{child}/root{inside}")
    except OSError:
        return None
    return st.f_files - st.f_ffree


class DiskWatch:
    """The bytes and files a run adds to `dirs`, against `disk` and `files` (see the module doc).

    With `tmpfs` (the path of a run's sized storage inside its sandbox, storage.py, and the
    number of entries its tree starts with) the files it creates there are counted too,
    once `follow` names the bwrap process."""

    def __init__(self, dirs: Sequence[str | Path], disk: int, files: int, interval: float = INTERVAL,
                 tmpfs: tuple[str, int] | None = None) -> None:
        self.dirs = tuple(dirs)
        self.disk = disk
        self.files = files
        self.interval = interval
        self.start_bytes, self.start_files = measure(self.dirs)
        self._next = time.monotonic() + interval
        self.tmpfs = tmpfs
        self._pid: int | None = None

    def follow(self, pid: int) -> None:
        """Count the files of the tmpfs in the sandbox bwrap process `pid` runs."""
        self._pid = pid

    def over(self, force: bool = False) -> str | None:
        """"disk limit" / "file limit" when the run has added more than allowed, else None; looks at
        most every `interval` seconds unless `force`."""
        now = time.monotonic()
        if not force and now < self._next:
            return None
        self._next = now + self.interval
        used, n = measure(self.dirs, self.start_bytes + self.disk, self.start_files + self.files)
        if used - self.start_bytes > self.disk:
            return "disk limit"
        added = n - self.start_files
        if self.tmpfs is not None and self._pid is not None:
            # The tree's own entries, its root, the tree and HOME dirs are there from the start.
            inodes = tmpfs_entries(self._pid, self.tmpfs[0])
            added += max(0, (inodes or 0) - (self.tmpfs[1] + 3))
        if added > self.files:
            return "file limit"
        return None
