"""Each revert of a batch session staged as its own commit and index, written in Python, not by git.

A revert run of its own commits the reverted file on the scratch (a root
commit with the scratch's one author, date and message: run/scratch_build.py),
so `git diff HEAD` finds nothing to tell. A batch session gives each of its
forks the same: the commit and the index that revert would have, staged
before the session starts (revert_batch.RevertSession). Through git that is
three processes per revert (`add`, `write-tree`, `commit-tree`) and a walk
of `.git` to stamp its mtimes, a cost that made the staging of a 200-hunk
sweep as long as its runs. Here the head's trees are read once (one
`ls-tree`), and each revert's blob, the trees on its path and its commit are
written as loose objects straight away (zlib, sha1: what git writes), its
index a copy of the head's with the one entry changed. Byte for byte the
objects and commit are git's (`git fsck` and `git diff` agree); the index
carries no cache-tree extension (git rebuilds it when it needs one). What a
test could tell from that, a null revert staged the same way (control.py)
shows too, its loose objects included: the head's blob, trees and commit are
all in the scratch's packs (scratch_build.pack_head), so a null revert's fork
gets the same loose objects a revert's does, one for the file, one per tree on
its path and one for the commit, each of them the head's own. In a sweep the pristine's store already
holds every single-hunk revert's objects and every null revert's (run/alike.py): then nothing is new,
and every fork's store is the same. An index git wrote in another format (v4), or anything unexpected,
makes `Stager.of` answer None and the caller stages through git as before.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from reviewui.core.errors import ReviewError
from reviewui.core.run.scratch_build import scratch_git, tree_mtime

_MODES = {"100644", "100755", "120000", "160000"}
STOCK = "stock"
"""The name (`stock-<id>.pack`) of the pack of every object a sweep's runs can commit (run/alike.py)."""


@dataclass
class _Entry:
    mode: str
    sha: bytes
    """20 raw bytes."""


def _object(kind: str, data: bytes) -> tuple[bytes, bytes]:
    """(sha1, the loose object's compressed bytes) of a git object."""
    raw = f"{kind} {len(data)}".encode() + b"\0" + data
    return hashlib.sha1(raw, usedforsecurity=False).digest(), raw


class Stager:
    """Stages commits and indexes of one scratch at its HEAD (see the module docstring)."""

    def __init__(self, scratch: Path, dirs: dict[str, dict[str, _Entry]], commit: bytes, index: bytes,
                 stamp: int | None) -> None:
        self.scratch = scratch
        self.store: Path | None = None
        """Where new objects go (`objects/<xx>/<rest>` below it) instead of the scratch's own
        `.git/objects`: a batch session's run directory, its child putting each revert's own in
        place for its fork only (so the tree does not grow with the reverts staged)."""
        self.made: list[str] = []
        """The objects (`<xx>/<rest>`) the last `stage` needed that HEAD does not have."""
        self._dirs = dirs
        """Folder ('' the root) -> name -> entry, as HEAD's trees hold them."""
        self._commit = commit
        """HEAD's commit object, its first (tree) line to be replaced."""
        self._index = index
        self._stamp = stamp
        self._written: set[bytes] = set()
        self._stocked = _stocked(scratch / ".git" / "objects" / "pack")
        """The objects of the stock pack (alike.py): a commit already has them, none is written or placed."""

    @staticmethod
    def of(scratch: Path) -> Stager | None:
        """A stager for `scratch` at its HEAD, or None when its index or trees are not as expected."""
        gd = str(scratch / ".git")
        try:
            listing = scratch_git(scratch, gd, "ls-tree", "-r", "-t", "-z", "--full-tree", "HEAD")
            commit = scratch_git(scratch, gd, "cat-file", "commit", "HEAD").encode("utf-8", "surrogateescape")
            index = (scratch / ".git" / "index").read_bytes()
        except (ReviewError, OSError):
            return None
        if index[:4] != b"DIRC" or struct.unpack(">I", index[4:8])[0] not in (2, 3) or not commit.startswith(b"tree "):
            return None
        if "\ufffd" in listing:
            return None  # a name git printed that is not UTF-8: staged through git instead
        dirs: dict[str, dict[str, _Entry]] = {"": {}}
        for row in listing.split("\0"):
            if not row:
                continue
            meta, _, path = row.partition("\t")
            mode, kind, sha = meta.split()
            folder, _, name = path.rpartition("/")
            if kind == "tree":
                dirs.setdefault(path, {})
                mode = "40000"
            elif mode not in _MODES:
                return None
            dirs.setdefault(folder, {})[name] = _Entry(mode, bytes.fromhex(sha))
        return Stager(scratch, dirs, commit, index, tree_mtime(scratch))

    def stage(self, files: dict[str, bytes | None], index_out: Path | None) -> str:
        """Write the objects of HEAD with `files` in place (None: deleted) and their index to
        `index_out` (None: no index); return the commit's id. The scratch's own HEAD, index and
        files are untouched."""
        self.made = []
        dirs: dict[str, dict[str, _Entry]] = {"": dict(self._dirs[""])}
        changed: dict[str, tuple[str, bytes] | None] = {}
        for rel, content in files.items():
            folder, _, name = rel.rpartition("/")
            at = ""
            for part in folder.split("/") if folder else []:  # every folder on the way (made where missing)
                here = f"{at}/{part}" if at else part
                dirs[at].setdefault(part, _Entry("40000", b""))
                dirs.setdefault(here, dict(self._dirs.get(here, {})))
                at = here
            if content is None:
                dirs[folder].pop(name, None)
                changed[rel] = None
                continue
            old = self._dirs.get(folder, {}).get(name)
            mode = old.mode if old is not None and old.mode != "40000" else "100644"
            sha = self._write("blob", content)
            dirs[folder][name] = _Entry(mode, sha)
            changed[rel] = (mode, sha)
        root = self._tree("", dirs)
        commit = self._commit.split(b"\n", 1)
        sha = self._write("commit", b"tree " + root.hex().encode() + b"\n" + commit[1])
        if index_out is not None:
            index_out.write_bytes(self._with(changed, files))
        return sha.hex()

    def _tree(self, folder: str, dirs: dict[str, dict[str, _Entry]]) -> bytes:
        """The id of `folder`'s tree, its changed subfolders written first (an emptied one dropped)."""
        entries = dirs.get(folder)
        if entries is None:
            return self._sha_of(folder)
        rows: list[tuple[bytes, bytes]] = []
        for name, e in entries.items():
            sha = e.sha
            if e.mode == "40000":
                path = f"{folder}/{name}" if folder else name
                if path in dirs:
                    if not dirs[path]:
                        continue
                    sha = self._tree(path, dirs)
            key = name.encode("utf-8", "surrogateescape") + (b"/" if e.mode == "40000" else b"")
            rows.append((key, e.mode.encode() + b" " + name.encode("utf-8", "surrogateescape") + b"\0" + sha))
        return self._write("tree", b"".join(row for _, row in sorted(rows)))

    def _sha_of(self, folder: str) -> bytes:
        parent, _, name = folder.rpartition("/")
        return self._dirs[parent][name].sha

    def _write(self, kind: str, data: bytes) -> bytes:
        """Write a loose object (once), with the tree's one mtime; return its id."""
        sha, raw = _object(kind, data)
        if sha in self._stocked:
            return sha
        hexed = sha.hex()
        if not (self.scratch / ".git" / "objects" / hexed[:2] / hexed[2:]).exists():
            self.made.append(f"{hexed[:2]}/{hexed[2:]}")
        if sha in self._written:
            return sha
        folder = (self.store if self.store is not None else self.scratch / ".git") / "objects" / hexed[:2]
        path = folder / hexed[2:]
        if self.store is not None:
            folder.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                path.write_bytes(zlib.compress(raw, 1))
        elif not path.exists():
            made = not folder.is_dir()
            folder.mkdir(exist_ok=True)
            tmp = folder / f".tmp-{hexed[2:]}"
            tmp.write_bytes(zlib.compress(raw, 1))
            os.chmod(tmp, 0o444)
            os.replace(tmp, path)
            if self._stamp is not None:
                os.utime(path, ns=(self._stamp, self._stamp))
                os.utime(folder, ns=(self._stamp, self._stamp))
                if made:
                    os.utime(folder.parent, ns=(self._stamp, self._stamp))
        self._written.add(sha)
        return sha

    def _with(self, changed: dict[str, tuple[str, bytes] | None], files: dict[str, bytes | None]) -> bytes:
        """HEAD's index with each changed path's entry set (mode, id, size) or dropped; no extensions."""
        data = self._index
        version, count = struct.unpack(">II", data[4:12])
        at = 12
        entries: list[tuple[bytes, bytes]] = []
        for _ in range(count):
            flags = struct.unpack(">H", data[at + 60:at + 62])[0]
            head = 62 + (2 if version == 3 and flags & 0x4000 else 0)
            end = data.index(b"\0", at + head)
            path = data[at + head:end]
            size = ((end - at) // 8 + 1) * 8
            entries.append((path, data[at:at + size]))
            at += size
        keep = dict(entries)
        for rel, new in changed.items():
            key = rel.encode("utf-8", "surrogateescape")
            if new is None:
                keep.pop(key, None)
                continue
            mode, sha = new
            size = len(files[rel] or b"")
            old = keep.get(key)
            stat = old[:24] if old is not None else bytes(24)
            uid_gid = old[28:36] if old is not None else bytes(8)
            flags = min(len(key), 0xFFF)
            body = stat + struct.pack(">I", int(mode, 8)) + uid_gid + struct.pack(">I", size) + sha \
                + struct.pack(">H", flags) + key
            keep[key] = body + b"\0" * (8 - (len(body) % 8))
        out = b"DIRC" + struct.pack(">II", version, len(keep)) + b"".join(keep[k] for k in sorted(keep))
        return out + hashlib.sha1(out, usedforsecurity=False).digest()


def _stocked(packs: Path) -> frozenset[bytes]:
    """The object ids in the stock packs under `packs` (index version 2: a fan-out table, then the
    sorted 20-byte names); none where there is no stock or an index is not that."""
    ids: set[bytes] = set()
    for idx in packs.glob(f"{STOCK}-*.idx"):
        try:
            data = idx.read_bytes()
        except OSError:
            continue
        if data[:8] != b"\377tOc\0\0\0\2" or len(data) < 8 + 1024:
            continue
        count = struct.unpack(">I", data[8 + 255 * 4:8 + 1024])[0]
        names = data[8 + 1024:8 + 1024 + 20 * count]
        ids.update(names[i:i + 20] for i in range(0, len(names), 20))
    return frozenset(ids)


def write_loose(scratch: Path, files: dict[str, bytes | None]) -> None:
    """Write, as loose objects in `scratch`'s own store, the objects of its HEAD with `files` in place
    that only a pack holds: the blobs, the trees on their paths and the commit. An edit that changes
    a file gets those from git as new loose objects; a null edit (the file's own bytes, control.py)
    would get none, and a test counting loose objects could tell the two apart."""
    stager = Stager.of(scratch)
    if stager is not None:
        stager.stage(files, None)

