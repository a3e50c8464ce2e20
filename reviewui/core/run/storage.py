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

Files too: bubblewrap cannot set a tmpfs's inode count, so where `unshare`
and `mount` are on the host the slot and the private /tmp are mounted by a
trusted step in front of bwrap (`mounted()`): `unshare --user --map-root-user
--mount` (the same as root and as an ordinary user: its own user and mount
namespace, nothing changes on the host), two `mount -t tmpfs -o
size=…,nr_inodes=…` on this process's own empty directories, then `exec bwrap`,
which binds them at room.SLOT and /tmp and builds the run's namespace inside
(its own user namespace again, every capability dropped, no-new-privs: the
run has no privilege over the mounts, whose superblocks belong to the outer
namespace). The slot holds `slot_inodes()` inodes: the tree's own entries,
its root, the tree and HOME dirs, `file-limit` and FILE_MARGIN; /tmp holds its
root, the mount points bwrap makes there, `file-limit` and FILE_MARGIN. The
file past that fails inside with ENOSPC at once; the watcher's count
(`watch.py`, one statfs a look, which also reads it after the run ended)
tells it from the byte limit, and the run is graded `broken` ("file limit").
A warm server's slot holds WARM_FILE_SLACK entries beyond its tree as it
started, as it holds WARM_SLACK bytes (a tree that outgrows either gets a
new server), so there the kernel stops a run at most that many files past
the limit and the watcher at its next look.

The sandbox's first self-test runs through this step; where it cannot (no
`unshare` or `mount`, user namespaces that cannot nest, a kernel that
refuses) `stop_capping()` records why and the slot and /tmp are bwrap's own
sized tmpfs, their files counted by the runner's watcher (`watch.py`) as
before: `files_level()` says which ("tmpfs": the kernel bounds them, "watch",
"none" unsandboxed).

Elsewhere (an older bwrap without `--size`, no `tar`) the slot is the host
directory bound read-write and the runner's watcher bounds what a run adds
(`level()` says which: "tmpfs" or "watch"; "none" unsandboxed).
"""

from __future__ import annotations

import functools
import posixpath
import shutil
import stat
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from reviewui.core.run import room, watch

if TYPE_CHECKING:
    from reviewui.core.run.sandbox import Box

PAGE = 4096
"""What tmpfs charges a file at least, per page of its contents."""
WARM_SLACK = 32 * 1024 * 1024
"""Bytes a warm server's tmpfs holds beyond `disk-limit` and its tree as measured when it started
(a revert changes the tree's size a little; a tree that outgrows it gets a new server)."""

FILE_MARGIN = watch.FILE_MARGIN
"""Files the kernel lets a run create past `file-limit` in a capped tmpfs: one, so that a run
stopped by the kernel has created more than the limit, which the watcher's count (the run is
stopped when it has created more) reads as "file limit", never as the byte limit."""
WARM_FILE_SLACK = 4096
"""Entries a warm server's slot holds beyond `file-limit` and its tree as counted when it started
(a revert adds or removes a file or two; a tree that outgrows it gets a new server)."""
SLOT_DIRS = 3
"""Inodes of a slot besides the tree's entries: its root, the tree's dir and HOME."""
TMP = "/tmp"
"""The run's private /tmp."""
SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
"""Where the trusted step's tools are looked for (never the reviewer's PATH)."""
MOUNT = ('"$1" -t tmpfs -o "$2" tmpfs "$3/slot" && "$1" -t tmpfs -o "$4" tmpfs "$3/tmp" && shift 4 && exec "$@"')
"""The shell line in front of bwrap: mount the slot's and /tmp's tmpfs (options $2, $4) on $3/slot,
$3/tmp in the new mount namespace, then run bwrap."""

UNPACK = '"$1" -xpf - -C "$2" --no-same-owner --delay-directory-restore && shift 2 && exec "$@" </dev/null'
"""The shell line a cold run starts with: unpack the tree from stdin into $1, then run the command."""


@functools.lru_cache(maxsize=1)
def _tar() -> str | None:
    return shutil.which("tar", path="/usr/bin:/bin")


def level() -> str:
    """How a run's writes are bounded: "tmpfs" (sized storage), "watch" (the watcher), "none" (unsandboxed)."""
    from reviewui.core.run import sandbox  # here: the sandbox module imports this one

    if sandbox.level() != "bwrap":
        return "none"
    exe = sandbox.bwrap_path()
    return "tmpfs" if exe is not None and sandbox.has_size_option(exe) and _tar() is not None else "watch"


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
    tar = _tar()
    assert tar is not None, "pack() without tar: check level() first"
    return subprocess.Popen([tar, "--format=posix", "-C", str(tree), "-cf", "-", "."],
                            stdout=subprocess.PIPE if out is None else out, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)


def cold_argv(tree_inside: str, argv: list[str]) -> list[str]:
    """The argv a cold run starts with inside: unpack stdin into `tree_inside`, then `argv`."""
    # tar by its system path: the run's PATH is the reviewer's, which need not name it.
    return ["/bin/sh", "-c", UNPACK, "sh", tar_path(), tree_inside, *argv]


def tar_path() -> str:
    """The system tar (a run's PATH need not reach it); only asked where level() is "tmpfs"."""
    tar = _tar()
    assert tar is not None, "no tar: check level() first"
    return tar


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


_lock = threading.Lock()
_off: str | None = None


@functools.lru_cache(maxsize=1)
def _tools() -> tuple[str, str, str] | None:
    unshare, sh, mount = (shutil.which(name, path=SYSTEM_PATH) for name in ("unshare", "sh", "mount"))
    return (unshare, sh, mount) if unshare and sh and mount else None


def stop_capping(why: str) -> None:
    """The kernel cannot cap a run's files here (`why`): from now on they are watched (files_level)."""
    global _off
    with _lock:
        _off = _off or why


def capping_problem() -> str | None:
    """Why the files of a run cannot be capped by the kernel here, else None."""
    from reviewui.core.run import sandbox  # here: the sandbox module imports this one

    exe = sandbox.bwrap_path()
    if exe is None or not sandbox.has_size_option(exe) or _tar() is None:
        return "no sized storage"
    if _tools() is None:
        return "no unshare, sh or mount in " + SYSTEM_PATH
    return _off


def files_level() -> str:
    """How the files a run creates are bounded: "tmpfs" (the kernel, an inode count), "watch"
    (counted by the watcher), "none" (unsandboxed)."""
    disk = level()
    if disk == "none":
        return "none"
    return "tmpfs" if disk == "tmpfs" and capping_problem() is None else "watch"


def self_test_slot() -> tuple[int, int]:
    """(scratch_size, scratch_files) of the sandbox's self-test box: a slot of one MiB and
    SELF_TEST_FILES files, so that it runs through `mounted()`, where it can; else (0, 0)."""
    return (1 << 20, SELF_TEST_FILES) if capping_problem() is None else (0, 0)


SELF_TEST_FILES = 7
"""The self-test slot's inode count beyond its root (any small number the host's tmpfs never has)."""


def self_test_problem(argv: Sequence[str], seen: dict[str, str], ok: bool) -> str | None:
    """After the sandbox's self-test ran `argv` (`ok`: it started and answered; `seen`: the inode
    counts it read, "slot" and "tmp"): why the kernel does not cap files there, recorded with
    `stop_capping` (the caller then tests again without the step), else None."""
    if not any(a == MOUNT for a in argv):
        return None
    why = None
    if not ok:
        why = "the mount step in front of bwrap failed"
    elif seen.get("slot") != str(1 + SELF_TEST_FILES):
        why = f"the slot's inode count is not set (it has {seen.get('slot', '?')})"
    if why is not None:
        stop_capping(why)
    return why


def capped(box: "Box") -> bool:
    """True when this box's slot and /tmp are mounted with an inode count (`mounted`)."""
    return box.scratch_size > 0 and box.scratch_files > 0 and capping_problem() is None


@functools.lru_cache(maxsize=1)
def _mount_dir() -> Path:
    """This process's empty dir with `slot` and `tmp` in it: mount points of every capped run,
    each in its own mount namespace (the host's dirs stay empty)."""
    from reviewui.core.run.tempdirs import private_tempdir  # here: tempdirs imports the sandbox

    top = private_tempdir("mnt")
    (top / "slot").mkdir()
    (top / "tmp").mkdir()
    top.chmod(0o755)
    return top


def tmp_args(box: "Box", sized: bool) -> list[str]:
    """bwrap arguments for the run's private /tmp: sized by `disk-limit` (bwrap's own tmpfs, or
    the capped one `mounted()` makes)."""
    if capped(box):
        return ["--bind", str(_mount_dir() / "tmp"), TMP]
    return [*(["--size", str(box.limits.disk)] if sized else []), "--tmpfs", TMP]


def slot_args(box: "Box") -> list[str]:
    """bwrap arguments for the run's slot (room.SLOT), a tmpfs of `box.scratch_size` bytes."""
    if capped(box):
        return ["--bind", str(_mount_dir() / "slot"), room.SLOT]
    return ["--size", str(box.scratch_size), "--tmpfs", room.SLOT]


def mounted(argv: list[str], exe: str, box: "Box") -> list[str]:
    """`argv` (a finished `... bwrap ... -- command`) with the trusted step that mounts the capped
    slot and /tmp in front of `exe` (see the module doc); unchanged when the box is not capped."""
    if not capped(box):
        return argv
    tools = _tools()
    assert tools is not None
    unshare, sh, mount = tools
    at = argv.index(exe)
    bwrap = argv[at + 1:]
    slot = 1 + made_under(bwrap, room.SLOT) + box.scratch_files
    tmp = 1 + made_under(bwrap, TMP) + box.limits.files + FILE_MARGIN
    opts = "size={},nr_inodes={},mode=0755"
    step = [unshare, "--user", "--map-root-user", "--mount", sh, "-c", MOUNT, "sh", mount,
            opts.format(box.scratch_size, slot), str(_mount_dir()), opts.format(box.limits.disk, tmp)]
    return [*argv[:at], *step, exe, *bwrap]


_ONE = {"--dir", "--tmpfs", "--proc", "--dev", "--mqueue"}
"""bwrap options that make their one argument."""
_TWO = {"--bind", "--bind-try", "--dev-bind", "--dev-bind-try", "--ro-bind", "--ro-bind-try", "--symlink",
        "--bind-fd", "--ro-bind-fd", "--file", "--bind-data", "--ro-bind-data"}
"""bwrap options that make their second argument."""
_SKIP = {"--uid": 1, "--gid": 1, "--hostname": 1, "--chdir": 1, "--setenv": 2, "--unsetenv": 1,
         "--lock-file": 1, "--sync-fd": 1, "--exec-label": 1, "--file-label": 1, "--seccomp": 1,
         "--add-seccomp-fd": 1, "--block-fd": 1, "--userns-block-fd": 1, "--info-fd": 1,
         "--json-status-fd": 1, "--cap-add": 1, "--cap-drop": 1, "--perms": 1, "--size": 1, "--args": 1,
         "--userns": 1, "--userns2": 1, "--pidns": 1, "--remount-ro": 1, "--chmod": 2}
"""Other bwrap options with arguments (they make nothing)."""


def made_under(bwrap_args: Sequence[str], top: str) -> int:
    """How many entries bwrap makes under `top` for these arguments (each destination below it
    and every missing dir on the way: mount points, `--dir`s, symlinks), counted generously
    (an option that may skip, `--bind-try`, counts), never short (bwrap could not start)."""
    made: set[str] = set()
    args = list(bwrap_args)
    n = 0
    while n < len(args) and args[n] != "--":
        opt = args[n]
        dest = None
        if opt in _ONE and n + 1 < len(args):
            dest, n = args[n + 1], n + 2
        elif opt in _TWO and n + 2 < len(args):
            dest, n = args[n + 2], n + 3
        else:
            n += 1 + _SKIP.get(opt, 0)
        dest = posixpath.normpath(dest) if dest is not None else None
        if dest is None or not dest.startswith(top + "/"):
            continue
        parts = dest[len(top) + 1:].split("/")
        made.update("/".join(parts[:k]) for k in range(1, len(parts) + 1))
    return len(made)
