"""Every note of the notes ref, parsed once per note blob: what the verdict relation reads.

A note body is parsed into chunks (model.parse_note: one tomllib call per
piece). The queue reads every note of a repository at once, and most of them
have not changed since its last read, so parsed notes are kept by the id of
the blob that holds them: a blob id names its bytes, so a kept parse is never
stale, and a moved or new note is a new blob. They are kept in this process,
and, when the caller names a file (`keep`: the queue does), between
processes too, as JSON: each chunk's text, its review as data
(`review_mapping`, read back with Review.from_mapping) and its provenance
key. That file says what the notes hold, so it is used only while it and its
directories are the user's alone (core/private.py), like every other trusted
thing reviewui keeps. Only the blobs not kept yet are read (`cat-file
--batch`, sizes asked first: a note over the input cap is never read, it is
listed in `too_big`).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewui.core.notes import provenance
from reviewui.core.notes.body import NoteChunk, parse_note
from reviewui.core.notes.model import Review
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


def notes_index(repo_dir: str | Path, ref: str, keep: Path | None = None) -> NotesIndex:
    """Read and parse every note under `ref` (parses kept by blob id, on disk too in `keep` when it is
    private; see the module docstring)."""
    snap = snapshot(repo_dir, ref)
    blob_of = {obj: snap.entries[path][2] for obj, path in snap.notes.items()}
    with _lock:
        known = {sha: _parsed[sha] for sha in set(blob_of.values()) if sha in _parsed}
    disk = _KeptFile(keep) if keep is not None else None
    if disk is not None:
        known.update(disk.load(set(blob_of.values()) - set(known)))
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
        if disk is not None:
            disk.add(fresh)
        with _lock:
            if len(_parsed) + len(fresh) > _KEPT:
                for sha in list(_parsed)[: len(_parsed) // 2]:
                    del _parsed[sha]
            _parsed.update(fresh)
    if disk is not None:
        disk.save(set(blob_of.values()))
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


def review_mapping(r: Review) -> dict[str, Any]:
    """`r` as plain JSON-ready data that Review.from_mapping reads back to an equal Review (`at` in ISO 8601)."""
    return {
        "id": r.id, "verdict": r.verdict, "reason": r.reason, "reviewer": r.reviewer, "at": r.at.isoformat(),
        "tool": r.tool, "branch": r.branch, "base": r.base, "head": r.head, "tree": r.tree, "patch_id": r.patch_id,
        "sandbox": r.sandbox, "limits": r.limits,
        "bite": [{"file": b.file, "header": b.header, "verdict": b.verdict, "failing_tests": list(b.failing_tests),
                  "guards": [{"line": g.line, "kind": g.kind, "description": g.description, "verdict": g.verdict,
                              "failing_tests": list(g.failing_tests)} for g in b.guards]} for b in r.bites],
        "probe": [{"name": p.name, "code": p.code, "branch": p.branch, "base": p.base} for p in r.probes],
        "comment": [{"file": c.file, "header": c.header, **({} if c.line is None else {"line": c.line}),
                     "text": c.text} for c in r.comments],
        "finding": [{"kind": f.kind, "message": f.message} for f in r.findings],
        "test": [{"id": t.id, "change": t.change, "head": t.head, "base": t.base} for t in r.tests],
    }


class _KeptFile:
    """Parsed notes kept between processes: blob id -> [[chunk text, review data or None, provenance key]]."""

    def __init__(self, path: Path) -> None:
        from reviewui.core.config import user_cache_dir
        from reviewui.core.private import private_file

        self.path = path
        self.usable = private_file(path, user_cache_dir()) is None
        self.data: dict[str, list[list[Any]]] = {}
        self.dirty = False
        if not self.usable:
            return
        try:
            loaded = json.loads(path.read_text(encoding="utf-8", errors="surrogateescape"))
        except (OSError, ValueError):
            return
        if isinstance(loaded, dict):
            self.data = {k: v for k, v in loaded.items() if isinstance(k, str) and isinstance(v, list)}

    def load(self, shas: set[str]) -> dict[str, tuple[NoteChunk, ...]]:
        """The kept parses of those of `shas` it holds (an entry that does not read back is left out)."""
        out: dict[str, tuple[NoteChunk, ...]] = {}
        for sha in shas & set(self.data):
            try:
                chunks = []
                for text, mapping, key in self.data[sha]:
                    review = Review.from_mapping(mapping) if mapping is not None else None
                    if mapping is not None and (review is None or not isinstance(key, str)):
                        raise ValueError("not a review")
                    if review is not None:
                        provenance.remember_key(review, key)
                    chunks.append(NoteChunk(str(text), review))
                out[sha] = tuple(chunks)
            except (TypeError, ValueError, AttributeError):
                continue
        return out

    def add(self, parsed: dict[str, tuple[NoteChunk, ...]]) -> None:
        """Keep `parsed`: each review only when its data reads back to an equal Review."""
        for sha, chunks in parsed.items():
            entry: list[list[Any]] = []
            for c in chunks:
                mapping = review_mapping(c.review) if c.review is not None else None
                if c.review is not None and Review.from_mapping(mapping) != c.review:
                    break  # does not round trip: this note is parsed afresh each time
                entry.append([c.text, mapping, provenance.key(c.review) if c.review is not None else None])
            else:
                self.data[sha] = entry
                self.dirty = True

    def save(self, live: set[str]) -> None:
        """Write what is kept, less the blobs the notes no longer hold (atomic; mode 0600)."""
        gone = set(self.data) - live
        if not self.usable or not (self.dirty or gone):
            return
        for sha in gone:
            del self.data[sha]
        try:
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
                json.dump(self.data, f, ensure_ascii=False)
            os.replace(tmp, self.path)
        except OSError:
            pass  # only speed is lost
