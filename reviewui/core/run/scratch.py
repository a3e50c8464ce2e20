"""One scratch slot's tree: a clean copy of a commit where tests run, and reviewui's edits to it.

`Scratch.checkout` copies a commit's pristine tree (scratch_build.py) into the
slot (or, where no run can write the slot, puts back only what reviewui wrote
since); `revert_hunk`, `add_file` and `edit_files` write by name alone, never
through a symlink or out of the tree, and commit a revert as HEAD so the code
under test cannot ask git whether it was edited. At a sweep's head (`alike`,
set by the pool) the copy is of a padded pristine and every write of a padded
file is padded to its size (run/alike.py). The pool that lends slots is
worktree.py.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath
from typing import Mapping

from reviewui.core.errors import ReviewError
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk
from reviewui.core.revert import RevertError, raw_hunk_for, revert_bytes
from reviewui.core.run import storage
from reviewui.core.run.alike import AlikeRuns, hide_new_objects, pad, style_of, unpad
from reviewui.core.run.scratch_build import commit_scratch, git_plain, pristine
from reviewui.core.run.scratch_slots import empty_slot
from reviewui.core.run.tempdirs import remove_tree

LINK_MODE = "120000"
"""git's mode for a symlink."""


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
        self.alike: AlikeRuns | None = None
        """The sweep's padding and stock for its head (set by the pool); other commits are plain."""
        self._padded: tuple[AlikeRuns, Path] | None = None
        """The padding in force since the last checkout, and the pristine it copied."""
        self._source: Path | None = None
        """The pristine the slot's copy is of (a checkout of another copies afresh)."""

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
        alike = self.alike if self.alike is not None and self.alike.head == sha else None
        source = pristine(self.repo_dir, self.root, sha, alike)
        self._padded = (alike, source) if alike is not None else None
        if (sha, source) == (self._sha, self._source) and self._touched is not None and self.path.is_dir() \
                and storage.level() == "tmpfs":
            try:
                self._put_back(source)
                self.rev = rev
                return
            except (OSError, shutil.Error):
                pass  # copied afresh below
        self._touched = None
        slot_dir = self.path.parent
        slot_dir.mkdir(parents=True, exist_ok=True)
        empty_slot(slot_dir)
        try:  # in Python, not `cp -a`: the reviewer's PATH may hold only git and their Python
            shutil.copytree(source, self.path, symlinks=True)
        except (OSError, shutil.Error) as e:
            raise ReviewError(f"cannot copy the scratch tree: {e}") from e
        self.rev, self._sha, self._touched = rev, sha, set()
        self._source = source

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
        out = self.padded(filediff.path, revert_bytes(self.unpadded(filediff.path, content), raw))
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
        p.write_bytes(self.padded(rel, content.encode("utf-8") if isinstance(content, str) else content))
        return p

    def padded(self, rel: str, content: bytes) -> bytes:
        """`content` as this scratch writes it at `rel`: padded to the head's size where the sweep
        pads that file (run/alike.py), else as it is."""
        if self._padded is None or rel not in self._padded[0].reserve:
            return content
        try:
            size = (self._padded[1] / rel).stat().st_size
        except OSError:
            return content
        return pad(content, size, style_of(rel) or "#")

    def hide_new_objects(self) -> None:
        """After a commit in a sweep's scratch (a run alone): what it wrote to git's store that the
        pristine lacks moved into a pack no test can name (run/alike.py). Plain scratches: nothing."""
        if self._padded is not None:
            hide_new_objects(self.path, self._padded[1])

    def unpadded(self, rel: str, content: bytes) -> bytes:
        """The head's own bytes of `content`, the file at `rel` as checked out (its pad taken off)."""
        if self._padded is None or rel not in self._padded[0].reserve:
            return content
        return unpad(content, self._padded[0].reserve[rel])

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
