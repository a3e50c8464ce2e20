"""The notes tree, written with plumbing only, and the compare-and-swap that moves the ref.

Writes never touch the index or a working tree: the new note blob, tree and
notes commit are built with hash-object/mktree/commit-tree, then the ref is
moved with `git update-ref <ref> <new> <old>` and retried with jittered
backoff when another writer won the race.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from reviewui.core.errors import ReviewError
from reviewui.core.git import rev_parse, run_git

_HEX = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
"""A full object id (SHA-1 or SHA-256): a note's annotated object."""


# --- the notes tree, with plumbing only --------------------------------------


@dataclass(frozen=True)
class NotesSnapshot:
    """The notes ref at one moment: its commit and where each note lives."""

    repo_dir: Path
    """The repository."""
    ref: str
    """The notes ref, e.g. `refs/notes/reviewui`."""
    commit: str | None
    """The notes commit the ref pointed at, or None when the ref did not exist."""
    entries: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    """Every path in the notes tree (blobs and subtrees) -> (mode, type, sha)."""
    notes: dict[str, str] = field(default_factory=dict)
    """Annotated object SHA -> path of its note in the tree (fanout included)."""

    def blob(self, obj: str) -> str | None:
        """Return the blob SHA of the note on `obj`, or None."""
        path = self.notes.get(obj)
        return self.entries[path][2] if path else None

    def read(self, obj: str) -> str | None:
        """Return the text of the note on `obj` (bytes kept via surrogateescape), or None."""
        sha = self.blob(obj)
        if sha is None:
            return None
        check_blob_sizes(self.repo_dir, [sha])  # a pulled note can be a bomb
        return run_git(self.repo_dir, "cat-file", "blob", sha).decode("utf-8", "surrogateescape")

    def read_all(self) -> dict[str, str]:
        """Return the text of every note, keyed by annotated object SHA, in one git call.

        Raises ReviewError when a note is over the input cap (none is read then).
        """
        shas = {obj: self.entries[p][2] for obj, p in self.notes.items()}
        blobs = read_blobs(self.repo_dir, list(set(shas.values())))
        return {obj: blobs[sha].decode("utf-8", "surrogateescape") for obj, sha in shas.items()}

    def read_all_bounded(self) -> tuple[dict[str, str], dict[str, int]]:
        """(text of every note within the input cap, size of every note over it), keyed by annotated object.

        Sizes are asked first (`cat-file --batch-check`): a note over the cap is never read.
        """
        from reviewui.core.bounded import limit

        cap = limit("note")
        shas = {obj: self.entries[p][2] for obj, p in self.notes.items()}
        sizes = blob_sizes(self.repo_dir, list(set(shas.values())))
        big = {obj: sizes[sha] for obj, sha in shas.items() if sizes.get(sha, 0) > cap}
        blobs = read_blobs(self.repo_dir, sorted({sha for obj, sha in shas.items() if obj not in big}))
        texts = {obj: blobs[sha].decode("utf-8", "surrogateescape") for obj, sha in shas.items() if obj not in big}
        return texts, big


def check_ref(repo_dir: str | Path, ref: str) -> str:
    """Return `ref` when it is a valid full ref name; raise ReviewError otherwise."""
    if not ref.startswith("refs/"):
        raise ReviewError(f"not a valid notes ref (must start with refs/): {ref!r}")
    try:
        run_git(repo_dir, "check-ref-format", ref)
    except ReviewError as e:
        raise ReviewError(f"not a valid notes ref: {ref!r}") from e
    return ref


def snapshot(repo_dir: str | Path, ref: str) -> NotesSnapshot:
    """Return the current state of the notes ref `ref` (empty when it does not exist)."""
    repo = Path(repo_dir)
    commit = rev_parse(repo, ref)
    if commit is None:
        return NotesSnapshot(repo, ref, None)
    entries: dict[str, tuple[str, str, str]] = {}
    notes: dict[str, str] = {}
    for rec in run_git(repo, "ls-tree", "-r", "-t", "-z", commit).split(b"\0"):
        if not rec:
            continue
        meta, _, raw_path = rec.partition(b"\t")
        mode, kind, sha = meta.decode().split(" ")
        path = raw_path.decode("utf-8", "surrogateescape")
        entries[path] = (mode, kind, sha)
        obj = path.replace("/", "")
        if kind == "blob" and _HEX.fullmatch(obj) and obj not in notes:
            notes[obj] = path
    return NotesSnapshot(repo, ref, commit, entries, notes)


def read_blobs(repo_dir: str | Path, shas: list[str]) -> dict[str, bytes]:
    """Return the contents of the blobs `shas`, read in one `git cat-file --batch`."""
    if not shas:
        return {}
    check_blob_sizes(repo_dir, shas)  # a pulled note can be a bomb
    out = run_git(repo_dir, "cat-file", "--batch", "--buffer", input="".join(s + "\n" for s in shas).encode())
    blobs: dict[str, bytes] = {}
    pos = 0
    for sha in shas:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].split()
        if len(header) != 3:
            raise ReviewError(f"git cat-file: cannot read object {sha}")
        size = int(header[2])
        blobs[sha] = out[nl + 1 : nl + 1 + size]
        pos = nl + 1 + size + 1
    return blobs


def blob_sizes(repo_dir: str | Path, shas: list[str]) -> dict[str, int]:
    """Return the size in bytes of each blob in `shas` (one `cat-file --batch-check`; nothing is read)."""
    if not shas:
        return {}
    out = run_git(repo_dir, "cat-file", "--batch-check", "--buffer", input="".join(s + "\n" for s in shas).encode())
    sizes: dict[str, int] = {}
    for line in out.decode("utf-8", "replace").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            sizes[parts[0]] = int(parts[2])
    return sizes


def check_blob_sizes(repo_dir: str | Path, shas: list[str]) -> None:
    """Raise ReviewError when any of the note blobs `shas` is larger than the input cap (core/bounded.py)."""
    from reviewui.core.bounded import limit

    cap = limit("note")
    for sha, size in blob_sizes(repo_dir, shas).items():
        if size > cap:
            raise ReviewError(f"note blob {sha[:12]} is larger than {cap:,} bytes (max-input-bytes); not read")


@dataclass(frozen=True)
class NotesEdit:
    """What one notes transaction writes."""

    bodies: dict[str, str]
    """Annotated object SHA -> the full new body of its note."""
    message: str
    """The notes commit message."""
    extra_parents: tuple[str, ...] = ()
    """Parents besides the current notes commit (a merged remote notes commit)."""
    move_to: str | None = None
    """When set, point the ref at this existing commit instead (a fast-forward)."""


def transact(
    repo_dir: str | Path,
    ref: str,
    change: Callable[[NotesSnapshot], NotesEdit | None],
    *,
    timeout: float = 60.0,
) -> NotesEdit | None:
    """Apply `change` to the notes ref atomically, retrying when another writer wins.

    `change` is called with a fresh snapshot on every attempt and returns
    the edit to make, or None for nothing to do. Returns the edit applied.
    Raises ReviewError when the ref cannot be moved within `timeout` seconds
    or git fails in a way a retry does not fix.
    """
    check_ref(repo_dir, ref)
    deadline = time.monotonic() + timeout
    attempt = stuck = 0
    while True:
        snap = snapshot(repo_dir, ref)
        edit = change(snap)
        if edit is None:
            return None
        new = edit.move_to or _write_commit(snap, edit)
        try:
            run_git(repo_dir, "update-ref", "-m", edit.message, ref, new, snap.commit or "")
            return edit
        except ReviewError as e:
            # The ref moved under us (another writer) or its lock is held: retry.
            stuck = 0 if snapshot(repo_dir, ref).commit != snap.commit else stuck + 1
            if time.monotonic() > deadline or stuck > 40:
                raise ReviewError(f"could not update {ref}: {e}") from e
        attempt += 1
        time.sleep(random.uniform(0.002, min(0.25, 0.005 * 2 ** min(attempt, 8))))


def _write_commit(snap: NotesSnapshot, edit: NotesEdit) -> str:
    repo = snap.repo_dir
    entries = dict(snap.entries)
    dirty: set[str] = {""}
    for obj, body in edit.bodies.items():
        blob = run_git(repo, "hash-object", "-w", "--stdin", input=body.encode("utf-8", "surrogateescape"))
        path = snap.notes.get(obj, obj)  # a new note goes at the top level, which git reads fine
        entries[path] = ("100644", "blob", blob.decode().strip())
        parts = path.split("/")
        dirty.update("/".join(parts[:i]) for i in range(1, len(parts)))
    children: dict[str, list[str]] = {}
    for path in entries:
        children.setdefault(path.rpartition("/")[0], []).append(path)
    built: dict[str, str] = {}
    # One `mktree --batch` per depth, deepest first, so a parent sees its new subtrees.
    for depth in sorted({d.count("/") + (1 if d else 0) for d in dirty}, reverse=True):
        level = sorted(d for d in dirty if d.count("/") + (1 if d else 0) == depth)
        records = []
        for d in level:
            rows = []
            for child in children.get(d, []):
                mode, kind, sha = entries[child]
                sha = built.get(child, sha) if kind == "tree" else sha
                name = child.rpartition("/")[2]
                rows.append(f"{mode} {kind} {sha}\t{name}".encode("utf-8", "surrogateescape"))
            records.append(b"\0".join(rows) + b"\0")
        out = run_git(repo, "mktree", "-z", "--batch", input=b"\0".join(records)).decode().split()
        built.update(zip(level, out, strict=True))
    parents = [p for p in (snap.commit, *edit.extra_parents) if p]
    args = [a for p in parents for a in ("-p", p)]
    return run_git(repo, "commit-tree", built[""], *args, "-m", edit.message).decode().strip()
