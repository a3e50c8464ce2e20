"""Turn one file's hunks into the rows a diff view draws, unified or side by side.

Rows are plain data (no styling); the view styles them when a row scrolls
into sight. Each row knows its hunk, so cursor, badges and actions can
name the hunk under the cursor (`row_of_*` find a hunk's or a line's row).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Sequence

from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import DiffLine, Hunk
from reviewui.core.safe_text import picture, visible
from reviewui.core.worddiff import Span, changed_spans, pair_changes

if TYPE_CHECKING:
    from reviewui.core.state import HunkComment

RowKind = Literal["hunk", "context", "added", "removed", "note", "split", "comment"]

COMMENT_MARK = "💬 "
"""What starts a comment's first row (its continuation rows are indented as wide)."""


@dataclass(frozen=True)
class Side:
    """One side of a side-by-side row."""

    kind: Literal["context", "added", "removed", "empty"]
    no: int | None
    text: str
    line: int = -1
    """Index of the source DiffLine within its hunk (for highlighting)."""
    partner: int = -1
    """Index of the paired changed line (for word-level spans), -1 when none."""


@dataclass(frozen=True)
class Row:
    """One drawn line of the diff view."""

    kind: RowKind
    hunk: int | None
    """Index of the hunk this row belongs to (None for file notes)."""
    text: str = ""
    old_no: int | None = None
    new_no: int | None = None
    line: int = -1
    """Index of the DiffLine within its hunk, -1 for headers and notes."""
    partner: int = -1
    """Index of the paired changed line (for word-level spans), -1 when none."""
    left: Side | None = None
    right: Side | None = None
    comment_line: int | None = None
    """For a comment row: the line its comment is on (None: on the whole hunk)."""

    @property
    def at_line(self) -> int | None:
        """The line a reviewer means with the cursor on this row: branch side, else base side."""
        if self.kind == "comment":
            return self.comment_line
        return self.new_no or self.old_no


def display_text(text: str) -> str:
    """Text safe to draw: tabs expanded, control, bidi and invisible characters shown as symbols.

    An ESC byte in agent-written content must never reach the terminal, and
    markup-looking text is drawn through Text objects, never parsed. One
    character stays one character, so word-level spans keep their offsets.
    """
    return picture(text.expandtabs(4))


def file_notes(f: FileDiff) -> list[str]:
    """The lines that describe a file which has no (or not only) text hunks."""
    notes: list[str] = []
    kinds = {"120000": "a symbolic link (its content is the link target)", "160000": "a submodule (the content is the commit it points at)"}
    if (f.new_mode or f.old_mode) in kinds:
        notes.append(f"{f.path} is {kinds[f.new_mode or f.old_mode or '']}")
    if f.status == "renamed":
        notes.append(f"renamed from {f.old_path}")
    if f.mode_changed:
        notes.append(f"mode changed {f.old_mode} → {f.new_mode}")
    if f.binary:
        old, new = f.sizes()
        notes.append(f"binary file: {_size(old)} → {_size(new)}")
    elif f.non_utf8:
        notes.append("not UTF-8: shown with replacement characters (�)")
    if not f.binary and not f.hunks:
        if f.status == "added":
            notes.append("empty file added")
        elif f.status == "deleted":
            notes.append("empty file deleted")
        elif not f.mode_changed and f.status != "renamed":
            notes.append("no textual change")
    return notes


def _size(n: int | None) -> str:
    return "absent" if n is None else f"{n:,} bytes"


def partners(lines: Sequence[DiffLine]) -> dict[int, int]:
    """Map each paired removed/added line index to its partner's index."""
    out: dict[int, int] = {}
    for r, a in pair_changes([ln.kind for ln in lines]):
        out[r], out[a] = a, r
    return out


def line_spans(lines: Sequence[DiffLine], i: int, partner: int) -> tuple[Span, ...]:
    """Word-level changed spans of line `i` against its partner (empty when unrelated)."""
    if partner < 0:
        return ()
    a, b = (i, partner) if lines[i].kind == "removed" else (partner, i)
    found = changed_spans(display_text(lines[a].text), display_text(lines[b].text))
    if not found:
        return ()
    return tuple(found[0] if lines[i].kind == "removed" else found[1])


def unified_rows(f: FileDiff) -> list[Row]:
    """Rows for the unified view: notes, then each hunk's header and lines."""
    rows = [Row("note", None, text=display_text(n)) for n in file_notes(f)]
    for h in f.hunks:
        rows.append(Row("hunk", h.index, text=display_text(_hunk_title(h))))
        pairs = partners(h.lines)
        for i, ln in enumerate(h.lines):
            rows.append(Row(ln.kind, h.index, display_text(ln.text), ln.old_no, ln.new_no, i, pairs.get(i, -1)))
    return rows


def split_rows(f: FileDiff) -> list[Row]:
    """Rows for the side-by-side view: removed lines left, added lines right."""
    rows = [Row("note", None, text=display_text(n)) for n in file_notes(f)]
    for h in f.hunks:
        rows.append(Row("hunk", h.index, text=display_text(_hunk_title(h))))
        pairs = partners(h.lines)
        lines = h.lines
        i = 0
        while i < len(lines):
            ln = lines[i]
            if ln.kind == "context":
                text = display_text(ln.text)
                side = Side("context", ln.old_no, text, i)
                rows.append(
                    Row("split", h.index, text, ln.old_no, ln.new_no, line=i, left=side,
                        right=Side("context", ln.new_no, text, i))
                )
                i += 1
                continue
            removed: list[int] = []
            while i < len(lines) and lines[i].kind == "removed":
                removed.append(i)
                i += 1
            added: list[int] = []
            while i < len(lines) and lines[i].kind == "added":
                added.append(i)
                i += 1
            for k in range(max(len(removed), len(added))):
                left = _side(lines, removed[k], "removed", pairs) if k < len(removed) else Side("empty", None, "")
                right = _side(lines, added[k], "added", pairs) if k < len(added) else Side("empty", None, "")
                first = removed[k] if k < len(removed) else added[k]
                rows.append(Row("split", h.index, line=first, left=left, right=right,
                                old_no=left.no, new_no=right.no))
    return rows


def _side(lines: Sequence[DiffLine], i: int, kind: Literal["added", "removed"], pairs: dict[int, int]) -> Side:
    ln = lines[i]
    return Side(kind, ln.old_no if kind == "removed" else ln.new_no, display_text(ln.text), i, pairs.get(i, -1))


def with_comments(rows: list[Row], f: FileDiff, comments: Sequence[HunkComment], width: int) -> list[Row]:
    """`rows` with each comment's rows inserted under what it is on, wrapped to `width` cells.

    A comment on a line goes under that line's row; one on the whole hunk (or
    on a line the hunk no longer shows) under the hunk's last row. Comments of
    hunks the file no longer has are left out (they are keyed by hunk header).
    """
    if not comments:
        return rows
    by_header = {h.header: h.index for h in f.hunks}
    after: dict[int, list[HunkComment]] = {}
    last_row: dict[int, int] = {}
    for y, row in enumerate(rows):
        if row.hunk is not None:
            last_row[row.hunk] = y
    for c in comments:
        hunk = by_header.get(c.header)
        if hunk is None or hunk not in last_row:
            continue
        y = last_row[hunk]
        if c.line is not None:
            y = next((i for i, r in enumerate(rows) if r.hunk == hunk and r.kind != "hunk" and r.at_line == c.line), y)
        after.setdefault(y, []).append(c)
    out: list[Row] = []
    for y, row in enumerate(rows):
        out.append(row)
        for c in after.get(y, ()):
            out.extend(comment_rows(c, by_header[c.header], width))
    return out


def comment_rows(c: HunkComment, hunk: int, width: int) -> list[Row]:
    """One comment as rows: `💬 line N: text`, wrapped to `width` cells, control characters made visible."""
    where = f"line {c.line}: " if c.line is not None else ""
    text = " ".join(visible(c.text).split()) or "(empty)"
    indent = " " * 3  # the mark is 3 cells wide (the emoji is 2)
    lines = textwrap.wrap(where + text, max(10, width - 3), break_long_words=True, break_on_hyphens=False)
    return [Row("comment", hunk, text=(COMMENT_MARK if i == 0 else indent) + line, comment_line=c.line)
            for i, line in enumerate(lines or [""])]


def _hunk_title(h: Hunk) -> str:
    return f"{h.header} {h.section}".rstrip()


def row_of_hunk(rows: Sequence[Row], index: int) -> int | None:
    """Index of the row of hunk `index`'s header, or None."""
    for y, row in enumerate(rows):
        if row.kind == "hunk" and row.hunk == index:
            return y
    return None


def row_of_line(rows: Sequence[Row], new_no: int) -> int | None:
    """Index of the row showing branch-side line `new_no`, or None."""
    for y, row in enumerate(rows):
        if row.kind == "comment":
            continue
        if row.new_no == new_no or (row.right is not None and row.right.kind != "removed" and row.right.no == new_no):
            return y
    return None


def row_of_hunk_line(rows: Sequence[Row], hunk: int, line: int) -> int | None:
    """Index of the row drawing line `line` (its index in the hunk) of hunk `hunk`, or None."""
    for y, row in enumerate(rows):
        if row.hunk != hunk:
            continue
        if row.line == line or any(side is not None and side.line == line for side in (row.left, row.right)):
            return y
    return None


def find_all(text: str, query: str) -> list[tuple[int, int]]:
    """(start, end) of every match of `query` in `text`, case-insensitive, not overlapping."""
    if not query:
        return []
    # A regex with IGNORECASE keeps offsets into `text` itself (casefold() can change lengths).
    return [m.span() for m in re.finditer(re.escape(query), text, re.IGNORECASE)]


def lineno(n: int | None) -> str:
    """A gutter's line number, five cells wide (blank when there is none)."""
    return f"{n:>5}" if n is not None else "     "
