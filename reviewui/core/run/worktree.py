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
import re
import shutil
import signal
import stat
import tempfile
import threading
from pathlib import Path, PurePosixPath
from typing import Iterator, Mapping

from reviewui.core.config import user_cache_dir
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk
from reviewui.core.errors import ReviewError
from reviewui.core.git import git_text
from reviewui.core.revert import RevertError, raw_hunk_for, revert_bytes
from reviewui.core.run import sandbox, storage
from reviewui.core.run.sandbox_env import SCRATCH_MARKER, WARM_OWNER_MARKER
from reviewui.core.run.scratch_build import (
    commit_scratch, git_plain, prune_pristines, pristine,
)
from reviewui.core.run.tempdirs import remove_tree, sweep_stale

LINK_MODE = "120000"
"""git's mode for a symlink."""

MAX_SCRATCHES = 64
"""Upper bound on scratch slots per repository (concurrent reviewui processes share them)."""


def repo_id(repo_dir: str | Path) -> str:
    """A stable directory name for a repository: its name plus a hash of its git dir."""
    common = Path(git_text(repo_dir, "rev-parse", "--path-format=absolute", "--git-common-dir")).resolve()
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(repo_dir).resolve().name)[:40] or "repo"
    return f"{name}-{hashlib.sha256(str(common).encode()).hexdigest()[:12]}"


def scratch_root(repo_dir: str | Path, kind: str = "scratch") -> Path:
    """The directory holding this repository's scratch trees (`kind="worktrees"`: where reviewui
    versions before the sandbox kept `git worktree` scratches)."""
    return user_cache_dir() / kind / repo_id(repo_dir)


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
        self._sha: str | None = None
        self._touched: set[str] | None = None
        """Paths reviewui wrote since the last checkout (None: unknown, the next checkout copies afresh)."""

    def checkout(self, rev: str) -> None:
        """Make the scratch a clean copy of `rev` with a repository of its own (HEAD = that tree).

        Everything a previous run left in the slot is removed. Where no run can write the
        slot's tree (sized storage: every run writes a tmpfs copy, storage.py) and the scratch
        is already at `rev`, only what reviewui itself wrote since is put back (each edited
        file and the scratch's `.git`), not the whole tree emptied and copied again. Raises
        ReviewError when git fails.
        """
        sha = git_plain(self.repo_dir, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
        if not sha:
            raise ReviewError(f"cannot check out {rev!r}: no such commit")
        source = pristine(self.repo_dir, self.root, sha)
        if sha == self._sha and self._touched is not None and self.path.is_dir() and storage.level() == "tmpfs":
            try:
                self._put_back(source)
                self.rev = rev
                return
            except (OSError, shutil.Error):
                pass  # copied afresh below
        self._touched = None
        slot_dir = self.path.parent
        slot_dir.mkdir(parents=True, exist_ok=True)
        _empty(slot_dir)
        try:  # in Python, not `cp -a`: the reviewer's PATH may hold only git and their Python
            shutil.copytree(source, self.path, symlinks=True)
        except (OSError, shutil.Error) as e:
            raise ReviewError(f"cannot copy the scratch tree: {e}") from e
        self.rev, self._sha, self._touched = rev, sha, set()

    def _put_back(self, source: Path) -> None:
        """Undo reviewui's own writes since the checkout: each touched path as in `source`, `.git` copied whole."""
        touched, self._touched = self._touched or set(), None  # unknown until this succeeds
        for rel in sorted(touched):
            here, there = self.path / rel, source / rel
            if here.is_symlink() or here.is_file():
                here.unlink()
            elif here.is_dir():
                remove_tree(here)
            if there.is_symlink() or there.exists():
                here.parent.mkdir(parents=True, exist_ok=True)
                if there.is_dir() and not there.is_symlink():
                    shutil.copytree(there, here, symlinks=True)
                else:
                    shutil.copy2(there, here, follow_symlinks=False)
            # A folder the edit made (the head has none there) goes too, up to one the head has.
            parent = here.parent
            while parent != self.path and not (source / parent.relative_to(self.path)).exists() and parent.is_dir():
                remove_tree(parent)
                parent = parent.parent
        remove_tree(self.path / ".git")
        shutil.copytree(source / ".git", self.path / ".git", symlinks=True)
        for rel in touched:  # the folders above an edit get the head's own mtimes back
            parent = (self.path / rel).parent
            while parent != self.path and parent.is_dir():
                st = (source / parent.relative_to(self.path)).stat()
                os.utime(parent, ns=(st.st_atime_ns, st.st_mtime_ns))
                parent = parent.parent
        st = source.stat()
        os.utime(self.path, ns=(st.st_atime_ns, st.st_mtime_ns))
        self._touched = set()

    def reset(self) -> None:
        """Undo every change made since the last checkout (a no-op before any)."""
        if self.rev is not None:
            self.checkout(self.rev)

    def revert_hunk(self, filediff: FileDiff, hunk: Hunk) -> str:
        """Undo exactly `hunk` of `filediff` in the scratch, commit it as HEAD; return the path changed.

        The scratch must be at the diff's head (fresh from `checkout`). An
        added file whose only hunk is reverted is deleted; a deleted file is
        recreated. A symlink is data: its target is what is reverted, and it
        is never followed. Raises RevertError when the hunk's lines are not
        where it says, when reverting would not change the file, or when the
        path leaves the scratch.
        """
        raw = raw_hunk_for(filediff, hunk)
        try:
            target = self._inside(filediff.path)
        except ReviewError as e:
            raise RevertError(str(e)) from e
        link = target.is_symlink()
        present = link or target.is_file()
        content = os.readlink(target).encode("utf-8", "surrogateescape") if link else \
            target.read_bytes() if present else b""
        if not present and filediff.status != "deleted":
            raise RevertError(f"{filediff.path} is missing from the scratch worktree")
        out = revert_bytes(content, raw)
        self.note_written(filediff.path)
        if link:
            target.unlink()  # replaced, never written through
        if not out and filediff.status == "added":
            target.unlink(missing_ok=True)
        elif filediff.old_mode == LINK_MODE:  # the base side is a link: it comes back as one
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(out.decode("utf-8", "surrogateescape"), target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(out)
        commit_scratch(self.path, filediff.path)
        return filediff.path

    def add_file(self, rel: str, content: str | bytes) -> Path:
        """Write a file (e.g. a probe test) at `rel` inside the scratch; return its path.

        Raises ReviewError when `rel` would escape the scratch.
        """
        p = self._inside(rel)
        self.note_written(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.is_symlink():
            p.unlink()  # a link there is replaced, never written through
        p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return p

    def edit_file(self, rel: str, content: bytes) -> None:
        """Replace the file at `rel` with `content` and commit it as HEAD, as a hunk revert is.

        The code under test then cannot ask git whether it was edited. Raises
        ReviewError when `rel` would escape the scratch or git fails.
        """
        self.edit_files({rel: content})

    def edit_files(self, files: Mapping[str, bytes]) -> None:
        """Replace each file at its path with its content and commit them all as HEAD, in one commit."""
        for rel, content in files.items():
            self.add_file(rel, content)
        commit_scratch(self.path, *files)

    def note_written(self, rel: str) -> None:
        """Note that reviewui writes `rel` (the next checkout of the same commit puts it back)."""
        if self._touched is not None:
            self._touched.add(rel)

    def _inside(self, rel: str) -> Path:
        """`rel` under the scratch, by its name alone: no `..`, no absolute path, and no folder on the way
        that is a symlink (the last part may be one: it is replaced, never followed)."""
        parts = PurePosixPath(rel).parts
        if not parts or PurePosixPath(rel).is_absolute() or ".." in parts or parts[0] == ".git":
            raise ReviewError(f"path escapes the scratch worktree: {rel}")
        here = self.path
        for part in parts[:-1]:
            here = here / part
            if here.is_symlink():
                raise ReviewError(f"path escapes the scratch worktree: {rel} (through the symlink {part})")
        return self.path.joinpath(*parts)



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
        self._idle: list[Scratch] = []
        self._returned = threading.Condition()

    def __enter__(self) -> "WorktreePool":
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Lock `size` slots, recovering any a crashed run left behind."""
        self.root.mkdir(parents=True, exist_ok=True)
        sweep_stale()  # a killed reviewui's temp dirs go with its slots, whichever command starts next
        prune_ours(self.common_dir, scratch_root(self.repo_dir, "worktrees"))
        prune_pristines(self.root)
        for slot in range(MAX_SCRATCHES):
            if len(self.scratches) >= self.size:
                break
            fd = _try_lock(self.root / f"{slot}.lock")
            if fd is None:
                continue
            path = (slot_base(self.root) / str(slot)).resolve() / "tree"
            scratch = Scratch(self.repo_dir, self.common_dir, path, slot, self.root)
            self._locks.append(fd)
            self.scratches.append(scratch)
            self._idle.append(scratch)
            previous = _claim(fd)
            if previous:
                kill_orphans(scratch.path, previous_owner=previous)
        if not self.scratches:
            self.close()
            raise ReviewError(f"every scratch slot under {self.root} is in use")
        self._sweep_abandoned_slots()

    def _sweep_abandoned_slots(self) -> None:
        """Empty slots nobody holds (a killed reviewui's scratch trees do not stay in the cache)."""
        slots = slot_base(self.root)
        mine = {s.slot for s in self.scratches}
        for entry in list(slots.iterdir()) if slots.is_dir() else ():
            if not entry.name.isdigit() or int(entry.name) in mine:
                continue
            fd = _try_lock(self.root / f"{entry.name}.lock")
            if fd is None:
                continue  # another reviewui's
            try:
                _empty(entry)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)

    def close(self) -> None:
        """Empty our slots (a run's files do not stay in the cache) and release every lock."""
        for scratch in self.scratches:
            _empty(scratch.path.parent)
        for fd in self._locks:
            try:
                os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
        self._locks.clear()

    @contextlib.contextmanager
    def acquire(self, prefer: Scratch | None = None) -> Iterator[Scratch]:
        """Lend one scratch (blocking until one is free; `prefer` when it is); it goes back on exit."""
        with self._returned:
            while not self._idle:
                self._returned.wait()
            scratch = prefer if prefer in self._idle else self._idle[0]
            self._idle.remove(scratch)
        try:
            yield scratch
        finally:
            with self._returned:
                self._idle.append(scratch)
                self._returned.notify()


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


def _empty(slot_dir: Path) -> None:
    """Remove everything in a slot dir but the dir itself (a warm server has it bound: same inode)."""
    if not slot_dir.is_dir():
        return
    for entry in list(slot_dir.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            remove_tree(entry)
        else:
            entry.unlink()


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



__all__ = ["RevertError", "Scratch", "WorktreePool", "kill_orphans", "prune_ours", "repo_id", "scratch_root"]

