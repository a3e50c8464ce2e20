"""The pool of scratch slots: the clean room where tests run, never the reviewer's tree nor linked to it.

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

One slot's tree and reviewui's edits to it are `Scratch` (scratch.py); where
slots live, their locks and the recovery after a crash are scratch_slots.py.

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
import os
import threading
from pathlib import Path
from typing import Iterator

from reviewui.core.errors import ReviewError
from reviewui.core.git import git_common_dir, git_text
from reviewui.core.run import sandbox
from reviewui.core.run.alike import AlikeRuns
from reviewui.core.run.scratch import Scratch
from reviewui.core.run.scratch_build import prune_pristines
from reviewui.core.run.scratch_slots import (
    MAX_SCRATCHES, claim, empty_slot, kill_orphans, prune_ours, scratch_root, slot_base, try_lock,
)
from reviewui.core.run.tempdirs import sweep_stale


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
        self.common_dir = git_common_dir(self.repo_dir).resolve()
        # One git process for both (git answers in order and stops at the first it cannot: no top level
        # when run inside the .git directory).
        answers = git_text(self.repo_dir, "rev-parse", "--absolute-git-dir", "--show-toplevel", check=False)
        git_dir_line, _, toplevel = answers.partition("\n")
        if not git_dir_line:
            raise ReviewError(f"not a git repository: {self.repo_dir}")
        git_dir = Path(git_dir_line).resolve()
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
            fd = try_lock(self.root / f"{slot}.lock")
            if fd is None:
                continue
            path = (slot_base(self.root) / str(slot)).resolve() / "tree"
            scratch = Scratch(self.repo_dir, self.common_dir, path, slot, self.root)
            self._locks.append(fd)
            self.scratches.append(scratch)
            self._idle.append(scratch)
            previous = claim(fd)
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
            fd = try_lock(self.root / f"{entry.name}.lock")
            if fd is None:
                continue  # another reviewui's
            try:
                empty_slot(entry)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)

    def close(self) -> None:
        """Empty our slots (a run's files do not stay in the cache) and release every lock."""
        for scratch in self.scratches:
            empty_slot(scratch.path.parent)
        for fd in self._locks:
            try:
                os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
        self._locks.clear()

    def look_alike(self, alike: AlikeRuns | None) -> None:
        """Build every slot's copy of `alike.head` padded and stocked from now on (run/alike.py);
        None: plain copies."""
        for scratch in self.scratches:
            scratch.alike = alike

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
