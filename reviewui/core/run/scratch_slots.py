"""Where a repository's scratch slots live, and what a crashed owner of one left behind.

The cache directory of a repository's scratches (`scratch_root`, named by
`repo_id`), the private per-user directory the slot trees sit in
(`slot_base`: a run sees its slot's path, which must not name the reviewer's
home), emptying a slot, the `flock` and pid that say who owns one, and the
recovery after a crash: the orphaned test processes of a slot
(`kill_orphans`) and worktree registrations of older versions (`prune_ours`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
from pathlib import Path

from reviewui.core.config import user_cache_dir
from reviewui.core.errors import ReviewError
from reviewui.core.git import git_common_dir
from reviewui.core.run.sandbox_env import SCRATCH_MARKER, WARM_OWNER_MARKER
from reviewui.core.run.tempdirs import remove_tree

MAX_SCRATCHES = 64
"""Upper bound on scratch slots per repository (concurrent reviewui processes share them)."""


def repo_id(repo_dir: str | Path) -> str:
    """A stable directory name for a repository: its name plus a hash of its git dir."""
    common = git_common_dir(repo_dir).resolve()
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(repo_dir).resolve().name)[:40] or "repo"
    return f"{name}-{hashlib.sha256(str(common).encode()).hexdigest()[:12]}"


def scratch_root(repo_dir: str | Path, kind: str = "scratch") -> Path:
    """The directory holding this repository's scratch trees (`kind="worktrees"`: where reviewui
    versions before the sandbox kept `git worktree` scratches)."""
    return user_cache_dir() / kind / repo_id(repo_dir)


def slot_base(root: Path) -> Path:
    """Where the slot dirs of the scratch root `root` live: `<tmp>/reviewui-scratch-u<uid>/<hash>/slots`.

    A run sees its scratch's path (its cwd, the mount table), so the path must not
    name the reviewer's home or repository, as `root` (in the user cache) would. The
    directory is private to this user (0700, owned by us, never a symlink); `root/slots`
    is a symlink to it, for the reviewer who looks in the cache.
    """
    base = Path(tempfile.gettempdir()) / f"reviewui-scratch-u{os.getuid()}"
    try:
        base.mkdir(mode=0o700, exist_ok=True)
        st = base.lstat()
    except OSError as e:
        raise ReviewError(f"cannot make the scratch directory {base}: {e.strerror or e}") from e
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise ReviewError(f"refusing to use {base}: it is not a directory of this user's")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(base, 0o700)
    here = base / hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16] / "slots"
    here.mkdir(parents=True, exist_ok=True)
    link = root / "slots"
    try:
        if link.is_symlink() and Path(os.readlink(link)) == here:
            return here
        if link.is_dir() and not link.is_symlink():
            remove_tree(link)  # the layout of older versions: slots inside the cache
        tmp = root / f".slots-{os.getpid()}-{threading.get_ident()}"
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        os.symlink(here, tmp)
        os.replace(tmp, link)
    except OSError:
        pass  # only the reviewer's pointer is missing
    return here


def empty_slot(slot_dir: Path) -> None:
    """Remove everything in a slot dir but the dir itself (a warm server has it bound: same inode)."""
    if not slot_dir.is_dir():
        return
    for entry in list(slot_dir.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            remove_tree(entry)
        else:
            entry.unlink()


def try_lock(path: Path) -> int | None:
    """An exclusive `flock` on `path` (made 0600 if missing): its descriptor, or None when another holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def claim(fd: int) -> str:
    """Write our pid into the lock; return the previous owner's pid it named (a crash), else ""."""
    previous = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return previous


def kill_orphans(scratch: Path, previous_owner: str = "") -> int:
    """SIGKILL processes still running tests in `scratch` after a crash; return how many.

    They are recognised by the REVIEWUI_SCRATCH variable the runner gives
    every test process (so an unrelated process is never hit by a reused pid),
    and, given the crashed reviewui's pid, by the REVIEWUI_WARM_OWNER variable
    of its warm pytest server, which the server's forked runs share.
    """
    needle = f"{SCRATCH_MARKER}={scratch}".encode()
    owner = f"{WARM_OWNER_MARKER}={previous_owner}".encode() if previous_owner.isdigit() else None
    if previous_owner == str(os.getpid()):
        owner = None  # our own pid, reused: our servers are alive and ours
    killed = 0
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        for var in env.split(b"\0"):
            if var == needle or var.startswith(needle + b"/") or (owner is not None and var == owner):
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                    killed += 1
                except OSError:
                    pass
                break
    return killed


def prune_ours(common_dir: Path, root: Path) -> None:
    """Drop worktree registrations that point into `root` at a directory that is gone.

    Like `git worktree prune`, but never touches the reviewer's own worktrees.
    """
    admin_root = common_dir / "worktrees"
    if not admin_root.is_dir():
        return
    root = root.resolve()
    for admin in admin_root.iterdir():
        try:
            gitfile = Path((admin / "gitdir").read_text().strip())
        except OSError:
            continue
        if root in gitfile.parents and not gitfile.exists():
            shutil.rmtree(admin, ignore_errors=True)
