"""One diff row as a Strip: the gutter, then the code scrolled sideways, padded to the width."""

from __future__ import annotations

from typing import NamedTuple

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip


class RowStyles(NamedTuple):
    """The styles one row needs beyond its background."""

    lineno: Style
    """The gutter's line numbers."""
    cut: Style
    """The `→`/`←` cut markers."""
    mark: tuple[str, Style] | None
    """A checked guard's mark and its style, drawn in the gutter's last cell."""
    author: tuple[int, str, Style] | None = None
    """Who wrote the line (authorship notes): the gutter cell, its letter and style."""


def assemble(gutter: str, code: Text, bg: Style, width: int, scroll_x: int, styles: RowStyles, console: Console,
             cut_marks: bool = False) -> Strip:
    """One Strip: gutter, then the code scrolled by `scroll_x`, padded to `width`.

    With `cut_marks`, a line cut at the right edge ends in `→` and one with
    text scrolled off to the left starts with `←` (the view's scrollbar
    says only that some line is wider, and a side-by-side half has none).

    Built as a single segment list: a Strip per step would cost more than
    the highlighting itself on a screenful of rows.
    """
    lineno = styles.lineno + Style(bgcolor=bg.bgcolor)
    room = max(0, width - len(gutter))
    if scroll_x or code.cell_len > room:
        hidden_left = cut_marks and scroll_x > 0 and bool(code.plain[:scroll_x].strip())
        code = code[scroll_x:] if scroll_x < len(code) else Text()
        if cut_marks and room > 1 and code.cell_len > room:
            code.truncate(room - 1)
            code.append("→", styles.cut)
        else:
            code.truncate(room)
        if hidden_left and room > 1:
            code = Text.assemble(("←", styles.cut), code[1:]) if code.cell_len else Text("←", styles.cut)
    segments = [Segment(gutter[:width], lineno)]
    if styles.mark is not None and len(gutter) <= width:  # a checked guard: its mark in the gutter's last cell
        segments = [Segment(gutter[:-1], lineno), Segment(*styles.mark)]
    if styles.author is not None and styles.author[0] < min(len(gutter) - 1, width):
        at, letter, style = styles.author  # who wrote it, in a gutter cell that is otherwise blank
        first = segments[0].text
        segments[0:1] = [Segment(first[:at], lineno), Segment(letter[:1], style + Style(bgcolor=bg.bgcolor)),
                         Segment(first[at + 1:], lineno)]
    used = min(len(gutter), width)
    for seg in code.render(console):
        if not seg.text:
            continue
        segments.append(Segment(seg.text, bg + seg.style if seg.style else bg))
        used += seg.cell_length
    if used < width:
        segments.append(Segment(" " * (width - used), bg))
    return Strip(segments, width)
