"""Every note of the notes ref, parsed once per note blob: what the verdict relation reads.

A note body is parsed into chunks (model.parse_note: one tomllib call per
piece). The queue reads every note of a repository at once, and most of them
have not changed since its last read, so parsed notes are kept in this
process by the id of the blob that holds them: a blob id names its bytes, so
a kept parse is never stale, and a moved or new note is a new blob. Only the
blobs not kept yet are read (`cat-file --batch`, sizes asked first: a note
over the input cap is never read, it is listed in `too_big`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from reviewui.core.notes.model import NoteChunk, parse_note
from reviewui.core.notes.store import NotesSnapshot, blob_sizes, read_blobs, snapshot

_KEPT = 50_000
"""Parsed note blobs kept in this process (the oldest half is dropped past it)."""
_parsed: dict[str, tuple[NoteChunk, ...]] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class NotesIndex:
    """The notes ref at one moment, every note parsed; reviews found by branch name or by commit."""

    snapshot: NotesSnapshot
    """The ref's state it was read from."""
    chunks: dict[str, tuple[NoteChunk, ...]] = field(default_factory=dict)
    """Annotated commit -> the chunks of its note, in note order."""
    too_big: dict[str, int] = field(default_factory=dict)
    """Annotated commit -> size of its note, for notes over the input cap (not read)."""
    by_branch: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Branch name a review names -> the commits whose notes hold such a review, sorted."""

    def commits_for(self, branch: str, head: str) -> list[str]:
        """The commits whose notes may hold reviews of `branch` at `head`: those naming it, and the head's own."""
        found = set(self.by_branch.get(branch, ()))
        if head in self.chunks:
            found.add(head)
        return sorted(found)


def notes_index(repo_dir: str | Path, ref: str) -> NotesIndex:
    """Read and parse every note under `ref` (parses kept by blob id; see the module docstring)."""
    snap = snapshot(repo_dir, ref)
    blob_of = {obj: snap.entries[path][2] for obj, path in snap.notes.items()}
    with _lock:
        known = {sha: _parsed[sha] for sha in set(blob_of.values()) if sha in _parsed}
    missing = sorted(set(blob_of.values()) - set(known))
    too_big_blobs: dict[str, int] = {}
    if missing:
        from reviewui.core.bounded import limit

        cap = limit("note")
        sizes = blob_sizes(repo_dir, missing)
        too_big_blobs = {sha: size for sha, size in sizes.items() if size > cap}
        texts = read_blobs(repo_dir, [sha for sha in missing if sha not in too_big_blobs])
        fresh = {sha: parse_note(data.decode("utf-8", "surrogateescape")) for sha, data in texts.items()}
        known.update(fresh)
        with _lock:
            if len(_parsed) + len(fresh) > _KEPT:
                for sha in list(_parsed)[: len(_parsed) // 2]:
                    del _parsed[sha]
            _parsed.update(fresh)
    chunks = {obj: known[sha] for obj, sha in blob_of.items() if sha in known}
    too_big = {obj: too_big_blobs[sha] for obj, sha in blob_of.items() if sha in too_big_blobs}
    by_branch: dict[str, set[str]] = {}
    for obj, parsed in chunks.items():
        for chunk in parsed:
            if chunk.review is not None:
                by_branch.setdefault(chunk.review.branch, set()).add(obj)
    return NotesIndex(snap, chunks, too_big, {b: tuple(sorted(c)) for b, c in by_branch.items()})


def forget_parsed() -> None:
    """Drop every kept parse (tests, and a bench's cold read)."""
    with _lock:
        _parsed.clear()
