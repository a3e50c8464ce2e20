"""Scratch git worktrees: the clean room where tests run, never the reviewer's tree.

Each scratch is a `git worktree add --detach` of the reviewed repository,
living under `user_cache_dir()/worktrees/<repo-id>/<n>` — outside the repo,
because pytest walks up parent directories for config and conftest files.
Scratches are reused between runs; resetting one only ever runs git with
`--git-dir`/`--work-tree` pointing at the scratch itself
(`checkout --detach -f <rev>` + `clean -ffdx`), so nothing can reach the
reviewer's working tree, index, HEAD, branches, tags or stash.

Ownership is an `flock` on `<n>.lock` (with the owner's pid written in it):
the kernel drops the lock when the owner dies, even by SIGKILL. A scratch
whose lock file still names another pid was abandoned by a crash: its
orphaned test processes (found by the REVIEWUI_SCRATCH variable every test
run carries) are killed, and the scratch is reset, or removed and re-added
when it is no longer a valid worktree. Stale worktree registrations of *our*
scratches are pruned; other worktrees of the repository are left alone.

Typical use (also by probes)::

    with WorktreePool(repo_dir, size=2) as pool:
        with pool.acquire() as scratch:
            scratch.checkout(head_sha)                # clean tree at head
            scratch.revert_hunk(filediff, hunk)       # optional: undo one hunk
            scratch.add_file("tests/test_probe.py", text)
            ...run_tests(scratch.path, ...)...
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import queue
import re
import shutil
import signal
from pathlib import Path
from typing import Iterator

from reviewui.core.config import user_cache_dir
from reviewui.core.diff import FileDiff, Hunk
from reviewui.core.errors import ReviewError
from reviewui.core.git import git_text, run_git
from reviewui.core.bite.revert import RevertError, raw_hunk_for, revert_bytes
from reviewui.core.run.sandbox_env import SCRATCH_MARKER, WARM_OWNER_MARKER

MAX_SCRATCHES = 64
"""Upper bound on scratch slots per repository (concurrent reviewui processes share them)."""

_GIT_SAFE = ("core.hooksPath=/dev/null", "core.fsmonitor=false", "advice.detachedHead=false")


def repo_id(repo_dir: str | Path) -> str:
    """A stable directory name for a repository: its name plus a hash of its git dir."""
    common = Path(git_text(repo_dir, "rev-parse", "--path-format=absolute", "--git-common-dir")).resolve()
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(repo_dir).resolve().name)[:40] or "repo"
    return f"{name}-{hashlib.sha256(str(common).encode()).hexdigest()[:12]}"


def scratch_root(repo_dir: str | Path) -> Path:
    """The directory holding this repository's scratch worktrees."""
    return user_cache_dir() / "worktrees" / repo_id(repo_dir)


class Scratch:
    """One scratch worktree, owned by this process while its lock is held."""

    def __init__(self, repo_dir: Path, common_dir: Path, path: Path, slot: int) -> None:
        self.repo_dir = repo_dir
        self.common_dir = common_dir
        self.path = path
        """Absolute path of the worktree (tests run with this as cwd)."""
        self.slot = slot
        self.rev: str | None = None
        """The commit the scratch was last checked out at."""
        self._admin: Path | None = None

    def checkout(self, rev: str) -> None:
        """Make the scratch a clean, detached checkout of `rev` (creating it if needed).

        Removes every untracked and ignored file. Raises ReviewError when git fails.
        """
        if self._admin is None or not self._is_valid():
            self._create(rev)
        self._git("checkout", "--detach", "-f", "-q", rev)
        self._git("clean", "-ffdxq")
        self.rev = rev

    def reset(self) -> None:
        """Undo every change made since the last checkout (a no-op before any)."""
        if self.rev is not None:
            self.checkout(self.rev)

    def revert_hunk(self, filediff: FileDiff, hunk: Hunk) -> str:
        """Undo exactly `hunk` of `filediff` in the scratch; return the path changed.

        The scratch must be at the diff's head. An added file whose only
        hunk is reverted is deleted; a deleted file is recreated. Raises
        RevertError when the hunk's lines are not where it says, or when
        reverting would not change the file.
        """
        raw = raw_hunk_for(filediff, hunk)
        target = self._inside(filediff.path)
        content = target.read_bytes() if target.is_file() else b""
        if not target.is_file() and filediff.status != "deleted":
            raise RevertError(f"{filediff.path} is missing from the scratch worktree")
        out = revert_bytes(content, raw)
        if not out and filediff.status == "added":
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(out)
        return filediff.path

    def add_file(self, rel: str, content: str | bytes) -> Path:
        """Write a file (e.g. a probe test) at `rel` inside the scratch; return its path.

        Raises ReviewError when `rel` would escape the scratch.
        """
        p = self._inside(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return p

    def _inside(self, rel: str) -> Path:
        p = (self.path / rel).resolve()
        if p != self.path and self.path not in p.parents:
            raise ReviewError(f"path escapes the scratch worktree: {rel}")
        return p

    # --- creation and validation -------------------------------------

    def _is_valid(self) -> bool:
        """True when the dir is a worktree of our repository whose admin dir points back at it."""
        dotgit = self.path / ".git"
        try:
            line = dotgit.read_text().strip()
        except OSError:
            return False
        if not line.startswith("gitdir: "):
            return False
        admin = Path(line[len("gitdir: ") :]).resolve()
        if admin.parent != (self.common_dir / "worktrees").resolve():
            return False
        try:
            back = Path((admin / "gitdir").read_text().strip()).resolve()
        except OSError:
            return False
        if back != dotgit.resolve():
            return False
        self._admin = admin
        return True

    def _create(self, rev: str) -> None:
        if self.path.exists() and not self._is_valid():
            shutil.rmtree(self.path, ignore_errors=True)
        if self.path.exists():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # `git worktree add` is not safe to run twice at once in one repository
        # (it reads the other entries under .git/worktrees while one is half
        # written), so creations are serialised across threads and processes.
        with _repo_lock(self.path.parent / "create.lock"):
            prune_ours(self.common_dir, self.path.parent)
            _git_plain(self.repo_dir, "worktree", "add", "--detach", "-f", "-q", str(self.path), rev)
        if not self._is_valid():
            raise ReviewError(f"git created a scratch worktree that does not check out: {self.path}")

    def _git(self, *args: str) -> str:
        assert self._admin is not None
        return _git_plain(self.path, f"--git-dir={self._admin}", f"--work-tree={self.path}", *args)


@contextlib.contextmanager
def _repo_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive flock on `path` (blocking) for the duration."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


class WorktreePool:
    """`size` scratch worktrees of one repository, locked for this process.

    Use as a context manager; `acquire()` lends one scratch to one worker at
    a time. Raises ReviewError when no slot can be locked.
    """

    def __init__(self, repo_dir: str | Path, size: int = 1) -> None:
        self.repo_dir = Path(repo_dir).resolve()
        self.size = max(1, size)
        self.root = scratch_root(self.repo_dir)
        self.common_dir = Path(
            git_text(self.repo_dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
        ).resolve()
        self.scratches: list[Scratch] = []
        self._locks: list[int] = []
        self._free: queue.Queue[Scratch] = queue.Queue()

    def __enter__(self) -> "WorktreePool":
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Lock `size` slots, recovering any a crashed run left behind."""
        self.root.mkdir(parents=True, exist_ok=True)
        prune_ours(self.common_dir, self.root)
        for slot in range(MAX_SCRATCHES):
            if len(self.scratches) >= self.size:
                break
            fd = _try_lock(self.root / f"{slot}.lock")
            if fd is None:
                continue
            scratch = Scratch(self.repo_dir, self.common_dir, (self.root / str(slot)).resolve(), slot)
            self._locks.append(fd)
            self.scratches.append(scratch)
            self._free.put(scratch)
            previous = _claim(fd)
            if previous:
                kill_orphans(scratch.path, previous_owner=previous)
        if not self.scratches:
            self.close()
            raise ReviewError(f"every scratch worktree slot under {self.root} is in use")

    def close(self) -> None:
        """Release every lock (scratches stay on disk for the next run)."""
        for fd in self._locks:
            try:
                os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
        self._locks.clear()

    @contextlib.contextmanager
    def acquire(self) -> Iterator[Scratch]:
        """Lend one scratch (blocking until one is free); it goes back on exit."""
        scratch = self._free.get()
        try:
            yield scratch
        finally:
            self._free.put(scratch)


def _try_lock(path: Path) -> int | None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _claim(fd: int) -> str:
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


def _git_plain(cwd: Path, *args: str) -> str:
    env: dict[str, str | None] = {
        # Never let discovery climb out of the scratch area into some enclosing repository.
        "GIT_CEILING_DIRECTORIES": str(Path(cwd).resolve().parent),
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_DIR": None, "GIT_WORK_TREE": None, "GIT_INDEX_FILE": None,
    }
    return run_git(cwd, *args, env=env, config=_GIT_SAFE).decode("utf-8", "replace")


__all__ = ["RevertError", "Scratch", "WorktreePool", "kill_orphans", "prune_ours", "repo_id", "scratch_root"]
