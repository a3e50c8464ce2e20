"""Undo exactly one hunk of a file, byte for byte.

The hunk is taken from the file's raw patch bytes (not from decoded text), so
non-UTF-8 content, CRLF line ends and "\\ No newline at end of file" come
back exactly as they were. The branch-side lines of the hunk must be found
at the hunk's position in the current content; otherwise the revert is
refused rather than guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk

_HEADER = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_LINE = re.compile(rb"[^\n]*\n|[^\n]+")


class RevertError(Exception):
    """The hunk cannot be reverted on this content (the message says why)."""


@dataclass(frozen=True)
class RawHunk:
    """One hunk as bytes: both sides' lines with their line ends."""

    old_start: int
    """First base-side line (1-based; the line before, when old_len is 0)."""
    old_lines: tuple[bytes, ...]
    """Base-side lines, line ends included."""
    new_start: int
    """First branch-side line (1-based; the line before, when new_len is 0)."""
    new_lines: tuple[bytes, ...]
    """Branch-side lines, line ends included."""


def split_lines(data: bytes) -> list[bytes]:
    """Split on b"\\n" only (a lone CR is content), keeping the line ends."""
    return _LINE.findall(data)


def raw_hunks(patch: bytes) -> list[RawHunk]:
    """Parse every hunk of one file's raw patch into RawHunks."""
    hunks: list[RawHunk] = []
    old: list[bytes] = []
    new: list[bytes] = []
    header: re.Match[bytes] | None = None
    last_sides = ""

    def flush() -> None:
        if header is not None:
            hunks.append(RawHunk(int(header.group(1)), tuple(old), int(header.group(3)), tuple(new)))

    for line in split_lines(patch):
        m = _HEADER.match(line)
        if m:
            flush()
            header, old, new, last_sides = m, [], [], ""
            continue
        if header is None:
            continue
        tag, body = line[:1], line[1:]
        if line == b"\n":  # diff.suppressBlankEmpty writes an empty context line bare
            tag, body = b" ", b"\n"
        if tag == b" ":
            old.append(body)
            new.append(body)
            last_sides = "on"
        elif tag == b"-":
            old.append(body)
            last_sides = "o"
        elif tag == b"+":
            new.append(body)
            last_sides = "n"
        elif tag == b"\\":
            # "\ No newline at end of file" applies to the line just before it.
            if "o" in last_sides and old:
                old[-1] = old[-1].rstrip(b"\n")
            if "n" in last_sides and new:
                new[-1] = new[-1].rstrip(b"\n")
        else:
            flush()
            header = None
    flush()
    return hunks


def revert_bytes(content: bytes, raw: RawHunk) -> bytes:
    """Return `content` with `raw`'s branch-side lines replaced by its base-side lines.

    Raises RevertError when the branch-side lines are not where the hunk
    says, or when the result would equal the input.
    """
    lines = split_lines(content)
    n = len(raw.new_lines)
    at = raw.new_start - 1 if n else raw.new_start
    if at < 0 or lines[at : at + n] != list(raw.new_lines):
        raise RevertError(f"the hunk's lines are not at line {raw.new_start} of the file")
    out = b"".join(lines[:at]) + b"".join(raw.old_lines) + b"".join(lines[at + n :])
    if out == content:
        raise RevertError("reverting the hunk would not change the file")
    return out


def raw_hunk_for(filediff: FileDiff, hunk: Hunk) -> RawHunk:
    """Return the bytes of `hunk` from `filediff`'s raw patch. Raises RevertError."""
    found = raw_hunks(filediff.raw_patch)
    if not 0 <= hunk.index < len(found):
        raise RevertError(f"hunk {hunk.index} not found in the patch of {filediff.path}")
    raw = found[hunk.index]
    if raw.new_start != hunk.new_start or len(raw.new_lines) != hunk.new_len:
        raise RevertError(f"hunk {hunk.index} of {filediff.path} does not match its header {hunk.header}")
    return raw
