"""Where a sandboxed run's writes go: sized tmpfs, bounded by the kernel in bytes and in files.

With a bwrap that can size a tmpfs (`--size`, bubblewrap 0.8+) and `tar` on
the host, a run never writes the host's scratch: its slot (`room.SLOT`) is a
tmpfs of `room_for(tree) + disk` bytes, the tree is unpacked into it from a
tar stream before the command starts (a cold run: `tar -x` on stdin, then
`exec`; a warm run: by the server before it forks), and the run's HOME is
beside the tree there (`room.SLOT/home`). A write past the limit fails inside
(ENOSPC) the moment it is made, and the run is graded `broken` ("disk
limit"). The mount names no host path, and the tree vanishes with the run
(results come back through the run directory).

Files too: where `mountns.py`'s trusted step can run in front of bwrap, the
slot and the private /tmp are mounted with an inode count. The slot holds the
tree's own entries, its root, the tree and HOME dirs, `file-limit` and
FILE_MARGIN (`cold_inodes`); /tmp its root, the mount points bwrap makes
there, `file-limit` and FILE_MARGIN. The file past that fails inside with
ENOSPC at once; the watcher's count (`watch.py`, one statfs a look, which
also reads it after the run ended) tells it from the byte limit, and the run
is graded `broken` ("file limit"). A warm server's slot holds WARM_FILE_SLACK
entries beyond its tree as it started (`warm_inodes`), as it holds WARM_SLACK
bytes (a tree that outgrows either gets a new server), so there the kernel
stops a run at most that many files past the limit and the watcher at its
next look. Where the step cannot run (the sandbox's self-test finds out) the
slot and /tmp are bwrap's own sized tmpfs and their files are counted by the
watcher as before: `files_level()` says which ("tmpfs": the kernel bounds
them, "watch", "none" unsandboxed).

Elsewhere (an older bwrap without `--size`, no `tar`) the slot is the host
directory bound read-write and the runner's watcher bounds what a run adds
(`level()` says which: "tmpfs" or "watch"; "none" unsandboxed).
"""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

from reviewui.core.run import mountns, room, sandbox, watch
from reviewui.core.run.tar_stream import system_tar

PAGE = 4096
"""What tmpfs charges a file at least, per page of its contents."""
WARM_SLACK = 1024 * 1024
"""Bytes a warm server's tmpfs holds beyond `disk-limit` and its tree as measured when it started
(a revert changes the tree's size a little; a tree that outgrows it gets a new server). What a warm
run can write past `disk-limit` at most: small, since the servers are per slot and cheap to replace."""

FILE_MARGIN = mountns.FILE_MARGIN
"""Files past `file-limit` the kernel lets a run create (mountns.FILE_MARGIN)."""
WARM_FILE_SLACK = 256
"""Entries a warm server's slot holds beyond `file-limit` and its tree as counted when it started
(a revert adds or removes a file or two; a tree that outgrows it gets a new server)."""

def level() -> str:
    """How a run's writes are bounded: "tmpfs" (sized storage), "watch" (the watcher), "none" (unsandboxed)."""
    if sandbox.level() != "bwrap":
        return "none"
    exe = sandbox.bwrap_path()
    return "tmpfs" if exe is not None and sandbox.has_size_option(exe) and system_tar() is not None else "watch"


def room_for(tree: str | Path) -> int:
    """Bytes the tree takes in a tmpfs (each regular file its contents rounded up to pages)."""
    return footprint(tree)[0]


def footprint(tree: str | Path) -> tuple[int, int]:
    """(bytes, inodes) the tree takes in a tmpfs: each regular file its contents rounded up to
    pages, every other entry a page; an inode per entry, a hard link's once (as `watch.measure` counts)."""
    total = 0
    seen: set[tuple[int, int]] = set()
    for st in watch.entries([tree]):
        if stat.S_ISREG(st.st_mode):
            total += -(-st.st_size // PAGE) * PAGE
        elif not stat.S_ISDIR(st.st_mode):
            total += PAGE
        seen.add((st.st_dev, st.st_ino))
    return total, len(seen)


def pack(tree: str | Path, out: int | None = None) -> subprocess.Popen[bytes]:
    """`tar` writing the tree (mtimes to the nanosecond, modes, symlinks as symlinks) to its stdout,
    or to the file descriptor `out`."""
    tar = system_tar()
    assert tar is not None, "pack() without tar: check level() first"
    return subprocess.Popen([tar, "--format=posix", "-C", str(tree), "-cf", "-", "."],
                            stdout=subprocess.PIPE if out is None else out, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)


def home_inside() -> str:
    """The run's HOME in the sized storage (beside the tree, not in it)."""
    return room.SLOT + "/home"


def cold_inodes(entries: int, files: int) -> int:
    """Inodes a cold run's slot holds beyond its root and the dirs bwrap makes there (tree, HOME):
    the tree's `entries`, `files` and FILE_MARGIN."""
    return entries + files + FILE_MARGIN


def warm_inodes(entries: int, files: int) -> int:
    """Inodes a warm server's slot holds beyond its root: the tree and HOME dirs each run's
    unpack makes, `entries` (its tree's when it started, plus WARM_FILE_SLACK), `files`, FILE_MARGIN."""
    return 2 + entries + files + FILE_MARGIN


def files_level() -> str:
    """How the files a run creates are bounded: "tmpfs" (the kernel, an inode count), "watch"
    (counted by the watcher), "none" (unsandboxed)."""
    disk = level()
    if disk == "none":
        return "none"
    return "tmpfs" if disk == "tmpfs" and mountns.capping_problem() is None else "watch"
