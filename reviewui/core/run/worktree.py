"""Scratch trees: the clean room where tests run, never the reviewer's tree and never linked to it.

A scratch is *not* a `git worktree` of the reviewed repository (whose `.git`
file would lead a test straight to the reviewer's refs, config and hooks). It
is a self-contained copy: for each commit reviewui builds, once, a *pristine*
tree under `user_cache_dir()/scratch/<repo-id>/pristine/<sha>` from the
repository's objects (a pack of exactly that tree, `read-tree` and
`checkout-index` in a fresh `git init`), with no hooks, no fsmonitor, no
filters or textconv (no system/global config is read, and the tree's
attributes are overridden), and a fresh repository whose HEAD commit *is*
the tree under test. A checkout copies the pristine into the slot; a
reverted hunk is committed on top (as a root commit with the same author,
date and message), so `git diff --quiet HEAD` cannot tell reverted from
unreverted. Nothing is registered in the reviewer's repository.

Slots live under `.../slots/<n>/tree` (the slot directory is what a sandboxed
run may write); ownership is an `flock` on `<n>.lock` (with the owner's pid
written in it): the kernel drops the lock when the owner dies, even by
SIGKILL. A slot whose lock file names another pid was abandoned by a crash:
its orphaned test processes (only possible without the sandbox, found by
the REVIEWUI_SCRATCH variable) are killed and the slot is rebuilt. Worktree
registrations left by older reviewui versions (under `worktrees/`) are pruned;
the reviewer's own worktrees are left alone.

Typical use (also by probes)::

    with WorktreePool(repo_dir, size=2) as pool:
        with pool.acquire() as scratch:
            scratch.checkout(head_sha)                # clean tree at head
            scratch.revert_hunk(filediff, hunk)       # optional: undo one hunk (and commit it)
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
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

from reviewui.core.config import user_cache_dir
from reviewui.core.diff import FileDiff, Hunk
from reviewui.core.errors import ReviewError
from reviewui.core.git import git_text, run_git
from reviewui.core.bite.revert import RevertError, raw_hunk_for, revert_bytes
from reviewui.core.run import sandbox
from reviewui.core.run.sandbox_env import SCRATCH_MARKER, WARM_OWNER_MARKER
from reviewui.core.run.tempdirs import remove_tree

MAX_SCRATCHES = 64
"""Upper bound on scratch slots per repository (concurrent reviewui processes share them)."""

KEEP_PRISTINES = 6
"""Pristine trees kept per repository (the oldest beyond this are removed when a pool opens)."""

SCRATCH_MESSAGE = "reviewui scratch"
"""The message of every scratch HEAD commit (reverted or not, they look alike)."""

_GIT_SAFE = ("core.hooksPath=/dev/null", "core.fsmonitor=false", "advice.detachedHead=false")

# The scratch's own repository: no system or global config (no filter drivers, no hooks,
# no fsmonitor from anywhere), a fixed identity and date so every scratch commit looks alike.
_SCRATCH_ENV: dict[str, str | None] = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "reviewui", "GIT_AUTHOR_EMAIL": "reviewui@localhost",
    "GIT_COMMITTER_NAME": "reviewui", "GIT_COMMITTER_EMAIL": "reviewui@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_INDEX_FILE": None, "GIT_OBJECT_DIRECTORY": None, "GIT_ALTERNATE_OBJECT_DIRECTORIES": None,
}
_NO_ATTRIBUTES = "* -text -eol -ident -filter -working-tree-encoding\n"


def repo_id(repo_dir: str | Path) -> str:
    """A stable directory name for a repository: its name plus a hash of its git dir."""
    common = Path(git_text(repo_dir, "rev-parse", "--path-format=absolute", "--git-common-dir")).resolve()
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(repo_dir).resolve().name)[:40] or "repo"
    return f"{name}-{hashlib.sha256(str(common).encode()).hexdigest()[:12]}"


def scratch_root(repo_dir: str | Path) -> Path:
    """The directory holding this repository's scratch worktrees."""
    return user_cache_dir() / "scratch" / repo_id(repo_dir)


def _legacy_root(repo_dir: str | Path) -> Path:
    """Where reviewui versions before the sandbox kept `git worktree` scratches."""
    return user_cache_dir() / "worktrees" / repo_id(repo_dir)


def _scratch_git(cwd: Path, git_dir: str, *args: str, stdin: bytes | None = None) -> str:
    env = {**_SCRATCH_ENV, "GIT_DIR": git_dir, "GIT_WORK_TREE": str(cwd), "GIT_CEILING_DIRECTORIES": str(cwd.parent)}
    return run_git(cwd, *args, env=env, config=_GIT_SAFE, input=stdin, what="scratch git").decode("utf-8", "replace")


def _pristine(repo_dir: Path, root: Path, sha: str) -> Path:
    """The pristine tree of commit `sha` (built on first use, shared by every slot)."""
    base = root / "pristine"
    done = base / sha
    if (done / ".git" / "HEAD").is_file():
        return done
    base.mkdir(parents=True, exist_ok=True)
    with _repo_lock(root / "pristine.lock"):
        if (done / ".git" / "HEAD").is_file():
            return done
        work = Path(tempfile.mkdtemp(prefix=".build-", dir=base))
        tree_dir = work / "tree"
        try:
            _build(repo_dir, tree_dir, sha)
            os.replace(tree_dir, done)
        finally:
            remove_tree(work)
    return done


def _build(repo_dir: Path, dest: Path, sha: str) -> None:
    """Write commit `sha`'s tree into `dest` with a fresh repository whose HEAD has exactly that tree."""
    tree = _git_plain(repo_dir, "rev-parse", "--verify", f"{sha}^{{tree}}").strip()
    objects = run_git(repo_dir, "rev-list", "--objects", tree, env=_plain_env(repo_dir), config=_GIT_SAFE)
    pack = run_git(repo_dir, "pack-objects", "--stdout", "-q", input=objects, env=_plain_env(repo_dir),
                   config=_GIT_SAFE)
    dest.mkdir(parents=True)
    gd = str(dest / ".git")
    run_git(dest, "init", "-q", "--template=", "-b", "scratch", str(dest),
            env={**_SCRATCH_ENV, "GIT_DIR": None, "GIT_WORK_TREE": None}, config=_GIT_SAFE)
    info = dest / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text(_NO_ATTRIBUTES)
    _scratch_git(dest, gd, "index-pack", "--stdin", stdin=pack)
    _scratch_git(dest, gd, "read-tree", tree)
    _scratch_git(dest, gd, "checkout-index", "-a", "-f", "-u")
    commit = _scratch_git(dest, gd, "commit-tree", tree, "-m", SCRATCH_MESSAGE).strip()
    _scratch_git(dest, gd, "update-ref", "HEAD", commit)


def _prune_pristines(root: Path) -> None:
    base = root / "pristine"
    if not base.is_dir():
        return
    with _repo_lock(root / "pristine.lock"):
        for stale in base.glob(".build-*"):  # builds run under this lock: any left is a killed one's
            remove_tree(stale)
        entries = sorted((p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")),
                         key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[KEEP_PRISTINES:]:
            remove_tree(old)


class Scratch:
    """One scratch slot, owned by this process while its lock is held."""

    def __init__(self, repo_dir: Path, common_dir: Path, path: Path, slot: int, root: Path | None = None) -> None:
        self.repo_dir = repo_dir
        self.common_dir = common_dir
        self.path = path
        """Absolute path of the scratch tree (tests run with this as cwd)."""
        self.slot = slot
        self.root = root or path.parent.parent.parent
        self.rev: str | None = None
        """The commit the scratch was last checked out at."""

    def checkout(self, rev: str) -> None:
        """Make the scratch a clean copy of `rev` with a repository of its own (HEAD = that tree).

        Everything a previous run left in the slot is removed. Raises ReviewError when git fails.
        """
        sha = _git_plain(self.repo_dir, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
        if not sha:
            raise ReviewError(f"cannot check out {rev!r}: no such commit")
        pristine = _pristine(self.repo_dir, self.root, sha)
        slot_dir = self.path.parent
        slot_dir.mkdir(parents=True, exist_ok=True)
        for entry in list(slot_dir.iterdir()):
            remove_tree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        proc = subprocess.run(["cp", "-a", str(pristine), str(self.path)], capture_output=True)
        if proc.returncode != 0:
            raise ReviewError(f"cannot copy the scratch tree: {proc.stderr.decode('utf-8', 'replace').strip()}")
        self.rev = rev

    def reset(self) -> None:
        """Undo every change made since the last checkout (a no-op before any)."""
        if self.rev is not None:
            self.checkout(self.rev)

    def revert_hunk(self, filediff: FileDiff, hunk: Hunk) -> str:
        """Undo exactly `hunk` of `filediff` in the scratch, commit it as HEAD; return the path changed.

        The scratch must be at the diff's head (fresh from `checkout`). An
        added file whose only hunk is reverted is deleted; a deleted file is
        recreated. Raises RevertError when the hunk's lines are not where it
        says, or when reverting would not change the file.
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
        self._commit(filediff.path)
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

    def _commit(self, rel: str) -> None:
        """Make HEAD the tree as it is now (only ever before any test ran in this copy)."""
        gd = str(self.path / ".git")
        _scratch_git(self.path, gd, "add", "-A", "--", rel)
        tree = _scratch_git(self.path, gd, "write-tree").strip()
        commit = _scratch_git(self.path, gd, "commit-tree", tree, "-m", SCRATCH_MESSAGE).strip()
        _scratch_git(self.path, gd, "update-ref", "HEAD", commit)


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
    """`size` scratch slots of one repository, locked for this process.

    Use as a context manager; `acquire()` lends one scratch to one worker at
    a time. Opening registers the repository (checkout and git dirs) as
    hidden from every sandboxed run. Raises ReviewError when no slot can be locked.
    """

    def __init__(self, repo_dir: str | Path, size: int = 1) -> None:
        self.repo_dir = Path(repo_dir).resolve()
        self.size = max(1, size)
        self.root = scratch_root(self.repo_dir)
        self.common_dir = Path(
            git_text(self.repo_dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
        ).resolve()
        git_dir = Path(git_text(self.repo_dir, "rev-parse", "--absolute-git-dir")).resolve()
        toplevel = git_text(self.repo_dir, "rev-parse", "--show-toplevel", check=False)
        sandbox.hide(self.repo_dir, self.common_dir, git_dir, *([toplevel] if toplevel else []), self.root)
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
        prune_ours(self.common_dir, _legacy_root(self.repo_dir))
        _prune_pristines(self.root)
        for slot in range(MAX_SCRATCHES):
            if len(self.scratches) >= self.size:
                break
            fd = _try_lock(self.root / f"{slot}.lock")
            if fd is None:
                continue
            path = (self.root / "slots" / str(slot)).resolve() / "tree"
            scratch = Scratch(self.repo_dir, self.common_dir, path, slot, self.root)
            self._locks.append(fd)
            self.scratches.append(scratch)
            self._free.put(scratch)
            previous = _claim(fd)
            if previous:
                kill_orphans(scratch.path, previous_owner=previous)
        if not self.scratches:
            self.close()
            raise ReviewError(f"every scratch slot under {self.root} is in use")
        self._sweep_abandoned_slots()

    def _sweep_abandoned_slots(self) -> None:
        """Empty slots nobody holds (a killed reviewui's scratch trees do not stay in the cache)."""
        slots = self.root / "slots"
        mine = {s.slot for s in self.scratches}
        for entry in list(slots.iterdir()) if slots.is_dir() else ():
            if not entry.name.isdigit() or int(entry.name) in mine:
                continue
            fd = _try_lock(self.root / f"{entry.name}.lock")
            if fd is None:
                continue  # another reviewui's
            try:
                remove_tree(entry)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)

    def close(self) -> None:
        """Empty our slots (a run's files do not stay in the cache) and release every lock."""
        for scratch in self.scratches:
            if scratch.path.parent.is_dir():
                remove_tree(scratch.path.parent)
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


def _plain_env(cwd: Path) -> dict[str, str | None]:
    return {
        # Never let discovery climb out of the repository into some enclosing one.
        "GIT_CEILING_DIRECTORIES": str(Path(cwd).resolve().parent),
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_DIR": None, "GIT_WORK_TREE": None, "GIT_INDEX_FILE": None,
    }


def _git_plain(cwd: Path, *args: str) -> str:
    """Read-only git in the reviewer's repository: no hooks, no fsmonitor, no optional locks."""
    return run_git(cwd, *args, env=_plain_env(cwd), config=_GIT_SAFE, check=False).decode("utf-8", "replace")


__all__ = ["RevertError", "Scratch", "WorktreePool", "kill_orphans", "prune_ours", "repo_id", "scratch_root"]
