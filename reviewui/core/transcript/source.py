"""Reading transcript files: plain or gzip, JSONL line by line or one JSON document.

Loaders never see raw bytes: they get parsed objects and a counter of the
lines that would not parse. A JSONL line is decoded with one call of the
C scanner and nothing else touches its text, which is what keeps a 100 MB
session within the performance budget (Claude Code's loader parses less
still: see claude_lines.py). Lines are read as text (UTF-8,
undecodable bytes replaced): `json.loads` on `str` skips the encoding
sniffing it does on `bytes`, and a stray invalid byte costs one character,
not the line.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from json.scanner import make_scanner
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Iterator, cast

from reviewui.core.bounded import open_gzip
from reviewui.core.errors import ReviewError

GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: Path) -> bool:
    """True when the file starts with the gzip magic bytes."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == GZIP_MAGIC
    except OSError:
        return False


def open_binary(path: Path) -> IO[bytes]:
    """Open `path` for reading bytes, transparently decompressing gzip.

    Raises ReviewError when the file cannot be opened.
    """
    try:
        if is_gzip(path):
            return open_gzip(path)  # decompression capped (core/bounded.py)
        return open(path, "rb")
    except OSError as e:
        raise ReviewError(f"cannot read transcript {path}: {e.strerror or e}") from e


def open_text(path: Path) -> IO[str]:
    """Open `path` as UTF-8 text split on `\\n` only, transparently decompressing gzip.

    Raises ReviewError when the file cannot be opened.
    """
    f: IO[str]
    try:
        if is_gzip(path):
            f = io.TextIOWrapper(open_gzip(path), encoding="utf-8-sig", errors="replace", newline="\n")
        else:
            # utf-8-sig: an editor's byte-order mark would otherwise spoil the first line (often the task).
            f = open(path, encoding="utf-8-sig", errors="replace", newline="\n")
    except OSError as e:
        raise ReviewError(f"cannot read transcript {path}: {e.strerror or e}") from e
    cast(Any, f)._CHUNK_SIZE = _TEXT_CHUNK  # typeshed leaves the attribute out; see _TEXT_CHUNK
    return f


_TEXT_CHUNK = 1 << 16
"""Bytes a text reader decodes at a time (the wrapper's own default is 8 KiB).

Each chunk is a call of the decoder's Python-level `decode`; on a 100 MB
session 64 KiB chunks read its lines in two thirds of the time. Larger is
slower again (the chunk and its text no longer stay in the CPU cache).
`_CHUNK_SIZE` is the attribute both io implementations have for it.
"""


def read_head_lines(path: Path, max_lines: int, max_bytes: int) -> tuple[list[bytes], bool]:
    """Return the first whole lines of the (decompressed) file and whether that is all of it.

    Reading stops after `max_lines` lines or once `max_bytes` have been read,
    but never inside a line. Raises ReviewError when the file cannot be read.
    """
    lines: list[bytes] = []
    total = 0
    try:
        with open_binary(path) as f:
            for raw in f:
                lines.append(raw)
                total += len(raw)
                if len(lines) >= max_lines or total >= max_bytes:
                    return lines, f.read(1) == b""
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as e:
        if not lines:
            raise ReviewError(f"cannot read transcript {path}: {e}") from e
        return lines, False
    return lines, True


@dataclass
class LineCounter:
    """How many lines a JSONL reader skipped because they would not parse."""

    skipped: int = 0
    """Malformed (non-JSON, non-UTF-8 or non-object) lines seen so far."""


# typeshed types make_scanner's argument as a scanner; it takes the decoder whose settings it copies.
_SCAN: Any = cast(Any, make_scanner)(json.JSONDecoder())


def scan_prefix(raw: str, start: int) -> tuple[Any, int]:
    """The JSON value starting exactly at `raw[start]` and the index just past it; ValueError when there is none."""
    try:
        value, end = _SCAN(raw, start)
    except StopIteration as e:  # the C scanner's way of saying "no value here"
        raise ValueError(f"no JSON value at column {start}") from e
    return value, end


def parse_line(raw: str) -> Any:
    """The JSON value of one line, as `json.loads` gives it; ValueError when the line is not one JSON value.

    Calls the decoder's C scanner directly: `json.loads` adds two Python
    calls and a regex match per line, a measurable share of a 100 MB load.
    """
    try:
        obj, end = _SCAN(raw, 0)
    except StopIteration:  # no value at column 0 (leading blanks, a BOM, not JSON): json.loads decides
        return json.loads(raw)
    if end != len(raw) and raw[end:].strip(" \t\n\r"):  # JSON's own whitespace only, as json.loads
        raise ValueError(f"extra data after column {end}")
    return obj


def iter_jsonl(
    path: Path,
    counter: LineCounter,
    ignore: Callable[[str], bool] | None = None,
    parse: Callable[[str], Any] | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line_number, object)` for every line of a JSONL file that is a JSON object.

    Blank lines are ignored; lines that are not JSON objects are counted in
    `counter.skipped`. A line `ignore` accepts (a record the loader would
    drop anyway) is passed over without being parsed. `parse` replaces
    `parse_line` for a format that can read its lines more cheaply (it
    raises ValueError for a malformed line). Raises ReviewError when the
    file cannot be read.
    """
    if parse is None:
        parse = parse_line
    with open_text(path) as f:
        n = 0
        try:
            for raw in f:
                n += 1
                if ignore is not None and ignore(raw):
                    continue
                try:
                    obj = parse(raw)
                except ValueError:
                    if raw.strip():
                        counter.skipped += 1
                    continue
                if type(obj) is dict:
                    yield n, obj
                else:
                    counter.skipped += 1
        except (EOFError, gzip.BadGzipFile, zlib.error):
            # A .gz cut short (the agent was killed mid-write): keep what was read.
            counter.skipped += 1
        except OSError as e:
            raise ReviewError(f"cannot read transcript {path}: {e.strerror or e}") from e


def read_text(path: Path) -> str:
    """The whole (decompressed) file as text, a byte-order mark dropped.

    A gzip file cut short gives what was decompressed. Raises ReviewError when
    the file cannot be read at all.
    """
    chunks: list[bytes] = []
    try:
        with open_binary(path) as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        if not chunks:
            raise ReviewError(f"cannot read transcript {path}: {e}") from e
    except OSError as e:
        raise ReviewError(f"cannot read transcript {path}: {e.strerror or e}") from e
    text = b"".join(chunks).decode("utf-8", "replace")
    return text[1:] if text.startswith("\ufeff") else text


@dataclass
class Document:
    """A parsed JSON document, and where it broke off when it was damaged."""

    value: Any
    """The document (as far as it parsed)."""
    skipped: int = 0
    """Non-blank lines past the break, left unread."""
    note: str | None = None
    """Where and why parsing stopped, for the reviewer; None when the document was whole."""


def parse_document(path: Path, text: str) -> Document | None:
    """Parse `text` (the file at `path`) as one JSON document, salvaging a damaged one.

    Returns None when not even the start of a document parses.
    """
    try:
        return Document(json.loads(text))
    except ValueError:
        pass
    from reviewui.core.transcript.salvage import salvage

    got = salvage(text)
    if got is None:
        return None
    note = (
        f"transcript {path.name} broke off at line {got.line}, column {got.column} ({got.reason}); "
        f"loaded what came before, {got.skipped_lines} line(s) after it skipped"
    )
    return Document(got.value, got.skipped_lines, note)


def load_document(path: Path) -> Any:
    """Parse the whole file as one JSON document (a damaged one as far as it reads).

    Raises ReviewError when it cannot be read or does not even start as JSON.
    """
    doc = parse_document(path, read_text(path))
    if doc is None:
        raise ReviewError(f"transcript {path.name} is not valid JSON")
    return doc.value
