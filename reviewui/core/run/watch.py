"""What a running test adds to the directories it may write: bytes and files, watched against the limits.

A run's io dir (and, where no sized tmpfs can be had, its scratch tree:
`storage.py`) are host directories bound into its sandbox (reviewui writes
requests there and reads reports back), so no tmpfs size bounds them. In a
sized tmpfs the bytes are bounded by its size, and (where storage.py can
mount it with an inode count) its files by the kernel too; they are counted
here from its statfs either way (`Inodes`), which is how a run the kernel
stopped at its inode count is told from one that ran out of bytes.
`DiskWatch` measures them when the run starts and again every `interval`
seconds while it runs, and once more when it has ended (`over(force=True)`:
it keeps the tmpfs open from its first look, so a cold run's is still read
after its sandbox is gone); the caller kills the run once it has added more
than `disk` bytes or `files` files, and grades it `broken` ("disk limit" /
"file limit"). RLIMIT_FSIZE bounds each single file in the meantime, so
what a run can add between two looks is bounded by what it can write in
`interval`.

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
FILE_MARGIN = 1
"""storage.FILE_MARGIN (here: storage imports this module)."""


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


class Inodes:
    """The inode counts of the tmpfs a sandbox has at `inside`, read through a handle opened at the
    first look that finds it (so they can still be read once the sandbox has gone)."""

    def __init__(self, inside: str) -> None:
        self.inside = inside
        self._fd: int | None = None

    def hold(self, pid: int | None) -> None:
        """Open the tmpfs of bwrap process `pid`'s sandbox, if not held yet and it is there."""
        if self._fd is not None or pid is None:
            return
        child = sandbox_child(pid)
        if child is None:
            return
        try:
            fd = os.open(f"/proc/{child}/root{self.inside}", os.O_PATH | os.O_DIRECTORY)
        except OSError:
            return
        if _sandbox_mount(fd, self.inside):
            self._fd = fd
        else:
            os.close(fd)

    def read(self, pid: int | None) -> tuple[int, int] | None:
        """(inodes in use, inodes free) of the tmpfs of bwrap process `pid`'s sandbox, or None
        while it cannot be found (its mounts not made yet, or gone before the first look)."""
        self.hold(pid)
        if self._fd is None:
            return None
        try:
            st = os.statvfs(self._fd)
        except OSError:
            return None
        return st.f_files - st.f_ffree, st.f_ffree

    def close(self) -> None:
        """Let the tmpfs go."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _sandbox_mount(fd: int, inside: str) -> bool:
    """True when `fd` is the sandbox's own mount at `inside`: a mount point (its parent on another
    device), and not the host's dir of that name (before bwrap has put the sandbox's root in
    place, the child's root is the host's)."""
    try:
        here = os.fstat(fd)
        parent = os.stat("..", dir_fd=fd, follow_symlinks=False)
    except OSError:
        return False
    try:
        host = os.stat(inside).st_dev
    except OSError:
        host = None
    return parent.st_dev != here.st_dev and here.st_dev != host


class DiskWatch:
    """The bytes and files a run adds to `dirs`, against `disk` and `files` (see the module doc).

    With `tmpfs` (the path of a run's sized storage inside its sandbox, storage.py, and the
    number of entries its tree starts with) the files it creates there are counted too,
    once `follow` names the bwrap process, and so are the files it leaves in its private
    /tmp where storage.py caps its inodes."""

    def __init__(self, dirs: Sequence[str | Path], disk: int, files: int, interval: float | None = None,
                 tmpfs: tuple[str, int] | None = None) -> None:
        self.dirs = tuple(dirs)
        self.disk = disk
        self.files = files
        self.interval = INTERVAL if interval is None else interval
        self.start_bytes, self.start_files = measure(self.dirs)
        self._next = time.monotonic() + self.interval
        self.tmpfs = tmpfs
        self._pid: int | None = None
        self._slot = Inodes(tmpfs[0]) if tmpfs is not None else None
        self._tmp = Inodes("/tmp") if tmpfs is not None else None

    def follow(self, pid: int) -> None:
        """Count the files of the tmpfs in the sandbox bwrap process `pid` runs."""
        self._pid = pid

    def over(self, force: bool = False) -> str | None:
        """"disk limit" / "file limit" when the run has added more than allowed, else None; looks at
        most every `interval` seconds unless `force`."""
        now = time.monotonic()
        if self._slot is not None and self._tmp is not None and not force:
            self._slot.hold(self._pid)  # as early as can be: a run may end before the next look
            self._tmp.hold(self._pid)
        if not force and now < self._next:
            return None
        self._next = now + self.interval
        used, n = measure(self.dirs, self.start_bytes + self.disk, self.start_files + self.files)
        if used - self.start_bytes > self.disk:
            return "disk limit"
        added = n - self.start_files
        if self.tmpfs is not None and self._slot is not None and self._tmp is not None:
            # The tree's own entries, its root, the tree and HOME dirs are there from the start.
            slot = self._slot.read(self._pid)
            added += max(0, (slot[0] if slot else 0) - (self.tmpfs[1] + 3))
            # /tmp, capped by storage.py, starts with `files` and the margin free: what the run has
            # used of them is what it added (an uncapped /tmp has far more free: it adds nothing).
            tmp = self._tmp.read(self._pid)
            if tmp is not None:
                added += max(0, self.files + FILE_MARGIN - tmp[1])
        if added > self.files:
            return "file limit"
        return None

    def close(self) -> None:
        """Let go of the tmpfs the watch holds open (the run has been graded)."""
        for held in (getattr(self, "_slot", None), getattr(self, "_tmp", None)):
            if held is not None:
                held.close()

    def __del__(self) -> None:
        self.close()
