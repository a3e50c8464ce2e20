"""The trusted step in front of bwrap that mounts a run's tmpfs with an inode count (storage.py).

bubblewrap can size a tmpfs (`--size`) but not set its inode count
(`nr_inodes`), so the files a run creates would only be counted between two
looks of the watcher. Where `unshare`, `sh` and `mount` are on the host,
`mounted()` puts a step in front of bwrap: `unshare --user --map-root-user
--mount` (its own user and mount namespace, nothing changes on the host; as
root `unshare --mount` only, and the step ends by dropping to run_uid.RUN_UID
with setpriv, binding first what that uid cannot reach: run_uid.py, where root's
step runs even for a box that is not capped), two `mount -t tmpfs -o
size=…,nr_inodes=…` on this process's own empty directories (`slot`, `tmp`),
then `exec bwrap`, whose arguments (`tmp_args`, `slot_args`) bind them at
/tmp and room.SLOT. bwrap builds the run's namespace inside that one as
always (its own user namespace again, every capability dropped,
no-new-privs, a uid other than 0): the run has no privilege over the
mounts, whose superblocks belong to the outer namespace, and the mount table
names no host path (a bind of a tmpfs root shows `/` and `tmpfs`).

Counts: the slot holds its root, what bwrap makes there (the tree and HOME
dirs) and `box.scratch_files` (storage.cold_inodes / warm_inodes: the tree's
entries, `file-limit`, FILE_MARGIN); /tmp holds its root, what bwrap makes
there (`made_under`: TMPDIR, mount points) and `file-limit` + FILE_MARGIN.
The step costs a cold run one `unshare`, one `sh` and two `mount`s (about
6 ms on a quiet machine: bench/bench_mount_step.py); a warm server pays it
once, when it starts.

The sandbox's first self-test runs through the step (`self_test_slot`) and
checks the slot's count (`self_test_problem`); where it cannot (no tools,
user namespaces that cannot nest, a kernel that refuses) `stop_capping`
records why, and runs get bwrap's own sized tmpfs with their files watched.
"""

from __future__ import annotations

import functools
import posixpath
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from reviewui.core.run import bwrap_start, room, run_uid, sandbox_world, tar_stream, watch
from reviewui.core.run.tempdirs import private_tempdir

if TYPE_CHECKING:
    from reviewui.core.run.box import Box

FILE_MARGIN = watch.FILE_MARGIN
"""Files the kernel lets a run create past `file-limit` in a capped tmpfs: one, so that a run
stopped by the kernel has created more than the limit, which the watcher's count (the run is
stopped when it has created more) reads as "file limit", never as the byte limit."""
TMP = "/tmp"
"""The run's private /tmp."""
SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
"""Where the step's tools are looked for (never the reviewer's PATH)."""
MOUNT = '"$1" -t tmpfs -o "$2" tmpfs "$3/slot" && "$1" -t tmpfs -o "$4" tmpfs "$3/tmp" && shift 4 && exec "$@"'
"""The shell line in front of bwrap: mount the slot's and /tmp's tmpfs (options $2, $4) on $3/slot,
$3/tmp in the new mount namespace, then run bwrap."""

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
    exe = bwrap_start.bwrap_path()
    if exe is None or not bwrap_start.has_size_option(exe) or tar_stream.system_tar() is None:
        return "no sized storage"
    if _tools() is None:
        return "no unshare, sh or mount in " + SYSTEM_PATH
    return _off


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
    if MOUNT not in argv:
        return None
    at = list(argv).index(MOUNT)
    # the step's arguments: sh, mount, the slot's options, the dir, /tmp's options (mounted())
    asked = {name: dict(o.split("=", 1) for o in argv[at + n].split(",") if "=" in o).get("nr_inodes")
             for name, n in (("slot", 3), ("tmp", 5))}
    why = None
    if not ok:
        why = "the mount step in front of bwrap failed"
    elif asked["slot"] != str(1 + SELF_TEST_FILES) or any(seen.get(k) != v for k, v in asked.items()):
        why = f"the inode count is not set (asked {asked}, the run has {({k: seen.get(k) for k in asked})})"
    if why is not None:
        stop_capping(why)
    return why


def capped(box: "Box") -> bool:
    """True when this box's slot and /tmp are mounted with an inode count (`mounted`)."""
    return box.scratch_size > 0 and box.scratch_files > 0 and capping_problem() is None


_mount_top: list[Path] = []


def _mount_dir() -> Path:
    """This process's empty dir with `slot`, `tmp` and `stage` in it: mount points of every capped run
    and of root's staged bind sources (run_uid.stage),
    each in its own mount namespace (the host's dirs stay empty). Made again if something
    removed it (a run whose mount point is missing would not start)."""
    with _lock:
        if not _mount_top or not all((_mount_top[0] / d).is_dir() for d in ("slot", "tmp", "stage")):
            import tempfile

            where = run_uid.reachable_base(tempfile.gettempdir()) if run_uid.as_root() else None
            top = private_tempdir("mnt", where)
            for name in ("slot", "tmp", "stage"):
                (top / name).mkdir()
            for point in (top, top / "stage"):
                run_uid.open_to_run(point, 0o711)  # as root a run's bwrap (RUN_UID) binds what is here
            _mount_top[:] = [top]
        return _mount_top[0]


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


def root_problem() -> str | None:
    """Why runs cannot drop root here (run_uid.py: the step needs unshare, sh, mount and setpriv),
    else None (and None for an ordinary user, whose runs have their own uid)."""
    if not run_uid.as_root():
        return None
    if _tools() is None or _setpriv() is None:
        return ("as root, runs start as an unprivileged uid through unshare, sh, mount and setpriv "
                f"(util-linux), not all found in {SYSTEM_PATH}")
    return None


@functools.lru_cache(maxsize=1)
def _setpriv() -> str | None:
    return shutil.which("setpriv", path=SYSTEM_PATH)


def mounted(argv: list[str], exe: str, box: "Box") -> list[str]:
    """`argv` (a finished `... bwrap ... -- command`) with the trusted step that mounts the capped
    slot and /tmp in front of `exe` (see the module doc), and as root drops to run_uid.RUN_UID
    there; unchanged for an ordinary user when the box is not capped."""
    root = run_uid.as_root()
    if not capped(box) and not root:
        return argv
    tools = _tools()
    assert tools is not None
    unshare, sh, mount = tools
    at = argv.index(exe)
    bwrap = argv[at + 1:]
    step: list[str] = []
    if capped(box):
        top = posixpath.dirname(bwrap[bwrap.index(room.SLOT) - 1])  # the dir slot_args bound
        slot = 1 + made_under(bwrap, room.SLOT) + box.scratch_files
        tmp = 1 + made_under(bwrap, TMP) + box.limits.files + FILE_MARGIN
        # As root the tmpfs roots belong to the run's uid (run_uid.py); a user's step maps its own.
        opts = "size={},nr_inodes={},mode=0755" + (f",uid={run_uid.RUN_UID},gid={run_uid.RUN_UID}" if root else "")
        step = [sh, "-c", MOUNT, "sh", mount, opts.format(box.scratch_size, slot), top, opts.format(box.limits.disk, tmp)]
    if not root:
        return [*argv[:at], unshare, "--user", "--map-root-user", "--mount", *step, exe, *bwrap]
    setpriv = _setpriv()
    assert setpriv is not None, "root_problem() is checked first"
    bwrap, pairs = run_uid.stage(bwrap, _mount_dir() / "stage")
    runs = runs_as(exe)
    if runs != exe:
        pairs += [exe, runs]  # a bwrap RUN_UID cannot reach (the wheel's, in a venv under /root)
    drop = [sh, "-c", run_uid.ROOT_LINE, "sh", mount, setpriv, str(run_uid.RUN_UID), str(len(pairs) // 2), *pairs]
    # A bwrap outside the system dirs is named `bwrap` in its command line (bwrap_start.OPTIONS_LINE_NAMED).
    bash = None if sandbox_world.covered(Path(exe)) else shutil.which("bash", path=SYSTEM_PATH)
    named = [bash, "-c", 'exec -a bwrap "$0" "$@"'] if bash else []
    return [*argv[:at], unshare, "--mount", "--propagation", "private", *step, *drop, *named, runs, *bwrap]


def runs_as(exe: str) -> str:
    """The path bwrap `exe` is started by: itself, or as root its staging point when run_uid.RUN_UID
    cannot reach it (`mounted` binds it there first)."""
    if not run_uid.as_root() or run_uid.reachable(exe):
        return exe
    return str(run_uid.point_for(exe, _mount_dir() / "stage"))


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
