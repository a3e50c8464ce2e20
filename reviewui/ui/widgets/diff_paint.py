"""How one row of the diff view is drawn: a hunk header with its badges, a code line, a comment, a note.

`paint_row` turns a `Row` (diff_rows.py) into a Strip from a `Paint`: what the
view knows at the moment (the file, its highlighter, badges, gutter marks,
authors, the search) and its component styles. The view caches the strips and
draws the cursor over them; nothing here keeps state. How wide the rows are
(`content_size`, `side_room`) is decided here too. Every string from the
branch reaches the screen as `Text`, never markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip

from reviewui.core.file_diff import FileDiff
from reviewui.ui.diff_rows import Row, Side, display_text, find_all, line_spans, lineno
from reviewui.ui.highlight import HunkHighlighter
from reviewui.ui.widgets.author_marks import AuthorMarks
from reviewui.ui.widgets.diff_strip import RowStyles, assemble

GUTTER = 13  # "12345 12345 +" plus a space
SIDE_GUTTER = 6  # "12345+" on each side of the side-by-side view


@dataclass(frozen=True)
class Badge:
    """A short label drawn on a hunk header: text and a component class suffix."""

    text: str
    tone: str  # good | bad | warn | info


@dataclass(frozen=True)
class Paint:
    """What drawing a row of one file needs from the view, as it is now."""

    file: FileDiff | None
    """The file shown."""
    highlighter: HunkHighlighter | None
    """Its syntax highlighter (rows are drawn plain until its lexer is ready)."""
    badges: dict[int, list[Badge]]
    """Hunk index -> the badges on its header."""
    marks: dict[int, tuple[str, str]]
    """Branch-side line -> (character, tone) drawn in the gutter."""
    authors: AuthorMarks
    """Who wrote each head line: gutter letters and the headers' authors."""
    search: str
    """The search whose matches are highlighted ("" for none)."""
    style: Callable[[str], Style]
    """A component style by its suffix (`added`, `badge-good` …)."""
    base: Style
    """The view's own style."""
    console: Console
    """The console rendering Text into segments."""


def side_room(width: int) -> int:
    """Cells for code in the narrower half of the side-by-side view at `width`."""
    half = max(1, (width - 1) // 2)
    return max(1, min(half, width - half - 1) - SIDE_GUTTER)


def content_size(rows: list[Row], split: bool, width: int) -> Size:
    """The view's virtual size: as wide as the longest line needs (side by side: the longest side in its
    half of `width`, the view's width, 0 when not known yet), a line per row."""
    if not split:
        longest = max((len(r.text) for r in rows if r.kind != "comment"), default=0)
        return Size(GUTTER + longest + 1, len(rows))
    longest = max((len(side.text) for r in rows for side in (r.left, r.right) if side is not None), default=0)
    if width <= 0:
        return Size(2 * (SIDE_GUTTER + longest) + 1, len(rows))
    return Size(width + max(0, longest - side_room(width)), len(rows))


def paint_row(p: Paint, row: Row, width: int, scroll_x: int) -> Strip:
    """The strip of `row` at `width` cells, the code scrolled `scroll_x` cells sideways."""
    if row.kind == "note":
        text = Text("  " + row.text, style=p.style("note"))
        return Strip(text.render(p.console), text.cell_len).extend_cell_length(width, p.base).crop(0, width)
    if row.kind == "hunk":
        return _header(p, row, width)
    if row.kind == "comment":
        return _comment(p, row, width)
    if row.kind == "split":
        half = max(1, (width - 1) // 2)
        left = _side(p, row.hunk, row.left, half, scroll_x)
        right = _side(p, row.hunk, row.right, width - half - 1, scroll_x)
        sep = Strip([Segment("│", p.style("lineno"))], 1)
        return Strip.join([left, sep, right])
    return _unified(p, row, width, scroll_x)


def _header(p: Paint, row: Row, width: int) -> Strip:
    style = p.style("hunk")
    hunk = p.file.hunks[row.hunk] if p.file is not None and row.hunk is not None else None
    # Range, then badges, then git's section line: a long section must not push the evidence off screen.
    text = Text(" " + (hunk.header if hunk else row.text) + " ", style=style)
    for badge in p.badges.get(row.hunk or 0, []):
        text.append(" ")
        text.append(f" {badge.text} ", p.style(f"badge-{badge.tone}"))
    if hunk is not None:
        text.append_text(p.authors.header(hunk, p.style("author") + Style(bgcolor=style.bgcolor), style))
    if hunk is not None and hunk.section:
        text.append("  " + display_text(hunk.section), p.style("lineno") + Style(bgcolor=style.bgcolor))
    text.truncate(width)
    return Strip(text.render(p.console), text.cell_len).extend_cell_length(width, style)


def _comment(p: Paint, row: Row, width: int) -> Strip:
    """A comment row: under the code, past the gutter, never scrolled sideways; cut with … if too wide."""
    style = p.style("comment")
    text = Text(" " * GUTTER + row.text, style=style, no_wrap=True)
    if text.cell_len > width:
        text.truncate(max(0, width - 1))
        text.append("…", style)
    return Strip(text.render(p.console), text.cell_len).extend_cell_length(width, style).crop(0, width)


def _code(p: Paint, hunk_index: int | None, line: int, fallback: str, partner: int, kind: str) -> Text:
    text: Text
    spans: tuple = ()
    if p.file is not None and p.highlighter is not None and hunk_index is not None and line >= 0:
        hunk = p.file.hunks[hunk_index]
        text = p.highlighter.line(hunk, line) if p.highlighter.ready else Text(fallback)
        spans = line_spans(hunk.lines, line, partner)
    else:
        text = Text(fallback)
    if spans:
        word = p.style("word-added" if kind == "added" else "word-removed")
        for start, end in spans:
            text.stylize(word, start, end)
    if p.search:
        match = p.style("match")
        for start, end in find_all(text.plain, p.search):
            text.stylize(match, start, end)
    return text


def _unified(p: Paint, row: Row, width: int, scroll_x: int) -> Strip:
    bg = {"added": p.style("added"), "removed": p.style("removed")}.get(row.kind, p.base)
    sign = {"added": "+", "removed": "-"}.get(row.kind, " ")
    gutter = f"{lineno(row.old_no)} {lineno(row.new_no)} {sign} "
    code = _code(p, row.hunk, row.line, row.text, row.partner, row.kind)
    mark = p.marks.get(row.new_no or 0)
    who = p.authors.letter(p.file.path, row.new_no) if p.file is not None else None
    # Marked here too: the scrollbar says some line is wider than the view, not which one,
    # and what an agent wrote past the edge (an `or True`) is exactly what must not go unseen.
    return assemble(gutter, code, bg, width, scroll_x, _marks_style(p, mark, who, 11), p.console, cut_marks=True)


def _side(p: Paint, hunk: int | None, side: Side | None, width: int, scroll_x: int) -> Strip:
    if side is None or side.kind == "empty":
        return Strip.blank(width, p.style("empty"))
    bg = {"added": p.style("added"), "removed": p.style("removed")}.get(side.kind, p.base)
    sign = {"added": "+", "removed": "-"}.get(side.kind, " ")
    code = _code(p, hunk, side.line, side.text, side.partner, side.kind)
    mark = p.marks.get(side.no or 0) if side.kind != "removed" else None
    who = p.authors.letter(p.file.path, side.no) if p.file is not None and side.kind != "removed" else None
    return assemble(f"{lineno(side.no)}{sign}", code, bg, width, scroll_x,
                    _marks_style(p, mark, who if (side.no or 0) < 10000 else None, 0), p.console, cut_marks=True)


def _marks_style(p: Paint, mark: tuple[str, str] | None, who: str | None = None, at: int = 0) -> RowStyles:
    """The gutter and cut-marker styles of one row, its guard mark (text, style) and author letter if any."""
    return RowStyles(p.style("lineno"), p.style("cut"),
                     None if mark is None else (mark[0], p.style(f"badge-{mark[1]}")),
                     None if who is None else (at, who, p.style("author")))
