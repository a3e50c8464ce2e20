"""Where the reviews and their signatures sit in a note body, decided by tomllib, never by matching TOML text.

A note body may hold foreign text (a hand-written remark, another tool's
note) beside reviewui's TOML, so it is not always one TOML document. It is
cut into pieces at the lines that open a `review` array table: a line is
such a header when tomllib, reading that line alone, finds a table header
for the array `review` (`[[review]]`, `[[ review ]]`, `[["review"]]`,
`[[review]]  # ...` are all one). The same test on one line finds the
`[review.signed]` table however it is spelled, and where any table header
starts (the end of a signature table).

A review piece is split into what its signature covers and what it does not:

    payload    every line before the `[review.signed]` header (minus the blank
               line before it): the exact bytes the reviewer signed
    signature  the header and the fewest following lines that parse to exactly
               `format` and `signature`
    rest       everything after that in the piece: covered by no signature

An unsigned piece has no signature and no rest of its own. Nothing here
judges a signature; see signing.py.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from typing import Any

REVIEW = ("review",)
SIGNED = ("review", "signed")
_MAX_SIGNATURE_LINES = 64
"""A signature table is a header and two short lines; more is not a signature reviewui wrote."""


@functools.lru_cache(maxsize=4096)  # a note repeats its header lines; each is one tomllib call
def table_header(line: str) -> tuple[tuple[str, ...], bool] | None:
    """The table a line opens: (its key path, whether it is an array table), or None for any other line."""
    text = line.strip()
    # A TOML line that starts with `[` can only be a table header; skipping the
    # rest keeps a long note from costing one tomllib call per line.
    if not text.startswith("["):
        return None
    try:
        doc: Any = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    path: list[str] = []
    while isinstance(doc, dict) and len(doc) == 1:
        ((key, value),) = doc.items()
        path.append(key)
        if value == {}:
            return tuple(path), False
        if value == [{}]:
            return tuple(path), True
        doc = value
    return None


def is_review_header(line: str) -> bool:
    """True when `line` opens a new `[[review]]` table, however it is spelled."""
    return table_header(line) == (REVIEW, True)


def pieces(body: str) -> list[str]:
    """`body` cut before every review header line; the pieces concatenate to `body`."""
    out: list[str] = []
    current: list[str] = []
    for line in body.splitlines(keepends=True):
        if current and is_review_header(line):
            out.append("".join(current))
            current = []
        current.append(line)
    if current:
        out.append("".join(current))
    return out


@dataclass(frozen=True)
class SignedParts:
    """A review piece split into what its signature covers and what it does not."""

    payload: str
    """The signed bytes (the whole piece when it has no signature table)."""
    signed: str
    """The signature table's text, with the blank line before it ("" when unsigned)."""
    rest: str
    """The piece after the signature table, covered by no signature ("" when unsigned)."""
    format: str | None
    """The signature's `format`; None when the piece has no signature table, "" when it is malformed."""
    signature: str
    """The signature itself ("" when unsigned or malformed)."""


def split_piece(piece: str) -> SignedParts:
    """Split one review piece at its `[review.signed]` table (see the module docstring)."""
    lines = piece.splitlines(keepends=True)
    at = next((i for i, line in enumerate(lines) if i and table_header(line) == (SIGNED, False)), None)
    if at is None:
        return SignedParts(piece, "", "", None, "")
    head = "".join(lines[:at])
    payload = head[:-1] if head.endswith("\n\n") else head
    gap = head[len(payload):]
    end = next((j for j in range(at + 1, len(lines)) if table_header(lines[j]) is not None), len(lines))
    for stop in range(at + 1, min(end, at + _MAX_SIGNATURE_LINES) + 1):
        fields = _signature_fields("".join(lines[at:stop]))
        if fields is not None:
            # Blank lines after the signature belong to it: they are how pieces are separated.
            while stop < len(lines) and not lines[stop].strip():
                stop += 1
            rest = "".join(lines[stop:])
            return SignedParts(payload, gap + "".join(lines[at:stop]), rest, *fields)
    return SignedParts(payload, gap + "".join(lines[at:end]), "".join(lines[end:]), "", "")


def _signature_fields(text: str) -> tuple[str, str] | None:
    """(format, signature) when `text` is a signature table holding exactly those two strings."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    table = doc.get("review", {}).get("signed") if list(doc) == ["review"] and isinstance(doc["review"], dict) else None
    if not isinstance(table, dict) or set(table) != {"format", "signature"}:
        return None
    fmt, sig = table["format"], table["signature"]
    return (fmt, sig) if isinstance(fmt, str) and isinstance(sig, str) else None
