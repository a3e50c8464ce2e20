"""Note bodies: the chunks of a note (reviews and foreign text) and appending to one.

A note body is TOML: each verdict one `[[review]]` table. It is read by
cutting the body before every line tomllib reads as a `[[review]]` header
(layout.py): a piece that parses into one review with an `id` and a known
`verdict` is a review, anything else (a hand-written remark, another tool's
TOML, text appended after a review's signature) is foreign text kept byte
for byte. See verdicts.py for how verdicts are stored and why.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass

from reviewui.core.notes.layout import pieces, split_piece
from reviewui.core.notes.model import Review


@dataclass(frozen=True)
class NoteChunk:
    """A piece of a note body: one review, or foreign text kept as it is."""

    text: str
    """The chunk's exact text (undecodable bytes kept as surrogate escapes)."""
    review: Review | None = None
    """The review the chunk holds, or None for foreign text."""


def parse_note(body: str) -> tuple[NoteChunk, ...]:
    """Return the chunks of a note body, in order; their texts concatenate to `body`.

    A signed review's chunk is its payload and signature only, and its review
    is read from the payload alone: whatever follows the signature in the
    same piece is a foreign chunk of its own (see layout.py).
    """
    chunks: list[NoteChunk] = []
    foreign: list[str] = []  # runs of foreign text, joined once: a hostile note can hold 10^5 of them
    for piece in pieces(body):
        for chunk in _parse_piece(piece):
            if chunk.review is None:
                foreign.append(chunk.text)
                continue
            if foreign:
                chunks.append(NoteChunk("".join(foreign)))
                foreign = []
            chunks.append(chunk)
    if foreign:
        chunks.append(NoteChunk("".join(foreign)))
    return tuple(chunks)


def reviews_in(body: str) -> list[Review]:
    """Return the reviews of a note body in order, de-duplicated by id."""
    seen: set[str] = set()
    out: list[Review] = []
    for chunk in parse_note(body):
        if chunk.review is not None and chunk.review.id not in seen:
            seen.add(chunk.review.id)
            out.append(chunk.review)
    return out


def append_text(body: str, piece: str) -> str:
    """Return `body` with `piece` added after a blank line; `body` itself is kept unchanged."""
    if body == "":
        return piece
    return body + ("" if body.endswith("\n") else "\n") + "\n" + piece


def _parse_piece(piece: str) -> list[NoteChunk]:
    parts = split_piece(piece)
    if parts.format is not None:
        review, _ = _load_review(parts.payload)
        if review is None:
            return [NoteChunk(piece)]  # nothing signed reads as a review: all of it is foreign
        rest = [NoteChunk(parts.rest)] if parts.rest else []
        return [NoteChunk(parts.payload + parts.signed, review), *rest]
    review, err_line = _load_review(piece)
    if review is not None:
        return [NoteChunk(piece, review)]
    if err_line and err_line > 1:
        lines = piece.splitlines(keepends=True)
        head = "".join(lines[: err_line - 1])
        review, _ = _load_review(head)
        if review is not None:
            return [NoteChunk(head, review), NoteChunk("".join(lines[err_line - 1 :]))]
    return [NoteChunk(piece)]


def _load_review(text: str) -> tuple[Review | None, int | None]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"at line (\d+)", str(e))
        return None, int(m.group(1)) if m else None
    tables = doc.get("review")
    if not isinstance(tables, list) or len(tables) != 1:
        return None, None
    return Review.from_mapping(tables[0]), None
