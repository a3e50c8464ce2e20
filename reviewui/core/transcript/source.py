"""Reading transcript files: plain or gzip, JSONL line by line or one JSON document.

Loaders never see raw bytes: they get parsed objects and a counter of the
lines that would not parse. A JSONL line is decoded with exactly one
`json.loads` call and nothing else touches its text, which is what keeps a
100 MB session within the performance budget. Lines are read as text (UTF-8,
undecodable bytes replaced): `json.loads` on `str` skips the encoding
sniffing it does on `bytes`, and a stray invalid byte costs one character,
not the line.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterator

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
    try:
        if is_gzip(path):
            return io.TextIOWrapper(open_gzip(path), encoding="utf-8", errors="replace", newline="\n")
        return open(path, encoding="utf-8", errors="replace", newline="\n")
    except OSError as e:
        raise ReviewError(f"cannot read transcript {path}: {e.strerror or e}") from e


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


def iter_jsonl(path: Path, counter: LineCounter) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line_number, object)` for every line of a JSONL file that is a JSON object.

    Blank lines are ignored; lines that are not JSON objects are counted in
    `counter.skipped`. Raises ReviewError when the file cannot be read.
    """
    loads = json.loads
    with open_text(path) as f:
        n = 0
        try:
            for raw in f:
                n += 1
                try:
                    obj = loads(raw)
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


def load_document(path: Path) -> Any:
    """Parse the whole file as one JSON document.

    Raises ReviewError when it cannot be read or is not valid JSON.
    """
    try:
        with open_binary(path) as f:
            data = f.read()
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise ReviewError(f"cannot read transcript {path}: {e}") from e
    try:
        return json.loads(data.decode("utf-8", "replace"))
    except ValueError as e:
        raise ReviewError(f"transcript {path.name} is not valid JSON: {e}") from e
