"""DiffView: one file's diff, drawn line by line only where it is visible.

A Line API widget: rows are computed when a file is shown (cheap), and a
row is highlighted and styled only when it scrolls into sight, so a file
of any size opens at once. A cursor row names the hunk under it; badges
(bite verdicts, reviewed marks, findings) are set on it from outside. How a
row is drawn is diff_paint.py; the view keeps the strips it drew.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual import on, work
from textual.binding import Binding
from textual.cache import LRUCache
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk
from reviewui.ui.widgets.author_marks import AuthorMarks
from reviewui.ui.widgets.line_cursor import LineCursorView
from reviewui.ui.diff_rows import (Row, row_of_hunk, row_of_hunk_line, row_of_line, split_rows, unified_rows,
                                   with_comments)
from reviewui.ui.highlight import HunkHighlighter, lexer_for
from reviewui.ui.widgets.diff_paint import GUTTER, Badge, Paint, content_size, paint_row, side_room

if TYPE_CHECKING:
    from reviewui.core.state import HunkComment

class DiffView(LineCursorView):
    """The diff of the selected file, with a cursor row and hunk badges."""

    COMPONENT_CLASSES = {
        "diff--added",
        "diff--removed",
        "diff--word-added",
        "diff--word-removed",
        "diff--hunk",
        "diff--note",
        "diff--lineno",
        "diff--cursor",
        "diff--empty",
        "diff--badge-good",
        "diff--badge-bad",
        "diff--badge-warn",
        "diff--badge-info",
        "diff--comment",
        "diff--cut",
        "diff--match",
        "diff--author",
    }

    DEFAULT_CSS = """
    DiffView { background: $surface; }
    DiffView > .diff--added { background: $success 18%; }
    DiffView > .diff--removed { background: $error 18%; }
    DiffView > .diff--word-added { background: $success 45%; }
    DiffView > .diff--word-removed { background: $error 45%; }
    DiffView > .diff--hunk { background: $panel; color: $accent; text-style: bold; }
    DiffView > .diff--note { color: $warning; text-style: italic; }
    DiffView > .diff--lineno { color: $text-muted; }
    DiffView > .diff--cursor { background: $primary 35%; }
    DiffView > .diff--empty { background: $panel 50%; }
    DiffView > .diff--badge-good { background: $success; color: $text; text-style: bold; }
    DiffView > .diff--badge-bad { background: $error; color: $text; text-style: bold; }
    DiffView > .diff--badge-warn { background: $warning; color: $background; text-style: bold; }
    DiffView > .diff--badge-info { background: $boost; color: $text-muted; }
    DiffView > .diff--cut { color: $warning; text-style: bold; }
    DiffView > .diff--match { background: $warning 70%; color: $background; text-style: bold; }
    DiffView > .diff--comment { background: $boost; color: $text-muted; text-style: italic; }
    DiffView > .diff--author { color: $secondary; text-style: bold; }
    """

    BINDINGS = [
        Binding("right,l", "pan(1)", "Scroll right", id="review.scroll_right", key_display="→/l", show=False,
                tooltip="Scroll the code sideways (lines cut at the edge end in →)"),
        Binding("left,h", "pan(-1)", "Scroll left", id="review.scroll_left", key_display="←/h", show=False,
                tooltip="Scroll the code back (a line with more to its left starts with ←)"),
    ]

    split: reactive[bool] = reactive(False)

    class HunkChanged(Message):
        """The hunk under the cursor changed (None: no hunk)."""

        def __init__(self, path: str | None, index: int | None) -> None:
            super().__init__()
            self.path = path
            self.index = index

    class LexerReady(Message, bubble=False):
        """The lexer for `path` is built: rows drawn plain can be drawn highlighted."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.file: FileDiff | None = None
        self.rows: list[Row] = []
        self.badges: dict[int, list[Badge]] = {}
        self.guard_marks: dict[str, dict[int, tuple[str, str]]] = {}
        """Path -> branch-side line -> (mark, tone) drawn in the gutter (checked guard reverts)."""
        self.comments: dict[str, tuple[HunkComment, ...]] = {}
        """Path -> the reviewer's comments, drawn as rows under what they are on."""
        self._wrap_width = 0
        self._highlighter: HunkHighlighter | None = None
        self._strips: LRUCache[tuple, Strip] = LRUCache(2048)
        self._last_hunk: tuple[str | None, int | None] = (None, None)
        self._styles: dict[str, Style] = {}
        self.search = ""
        """The search the reviewer typed (`/`): its matches are highlighted; "" for none."""
        self.hidden: dict[str, frozenset[int]] = {}
        """Path -> the hunks not drawn (the since-verdict view's `d`: the unchanged ones); a note says how many."""
        self.authors = AuthorMarks()
        """Who wrote each head line (git-ai notes): gutter letters and the hunk headers' authors."""

    # --- showing a file ----------------------------------------------------

    def show_file(self, f: FileDiff | None, hunk: int | None = None) -> None:
        """Show `f` with the cursor on hunk `hunk` (default: the first)."""
        self.file = f
        self._new_highlighter()
        self._rebuild()
        target = self.hunk_row(hunk if hunk is not None else 0)
        self.cursor = target if target is not None else 0
        self.scroll_to(0, max(0, self.cursor - 2), animate=False, immediate=True)
        self._announce()

    def set_badges(self, badges: dict[int, list[Badge]]) -> None:
        """Replace the badges drawn on hunk headers of the shown file."""
        self.badges = badges
        self._strips.clear()
        self.refresh()

    def set_authors(self, marks: AuthorMarks) -> None:
        """Replace the authorship drawn in the gutter and on hunk headers."""
        self.authors = marks
        self._strips.clear()
        self.refresh()

    def set_search(self, query: str) -> None:
        """Highlight every match of `query` (case-insensitive; "" clears)."""
        if query == self.search:
            return
        self.search = query
        self._strips.clear()
        self.refresh()

    def row_for_hunk_line(self, hunk: int, line: int) -> int | None:
        """The row drawing line `line` (its index in the hunk) of hunk `hunk`, or None."""
        return row_of_hunk_line(self.rows, hunk, line)

    def set_line_marks(self, path: str, marks: dict[int, tuple[str, str]]) -> None:
        """Replace the gutter marks (branch-side line -> (character, tone)) of file `path`."""
        self.guard_marks[path] = marks
        self._strips.clear()
        self.refresh()

    def set_comments(self, path: str, comments: tuple[HunkComment, ...]) -> None:
        """Replace the comments of file `path`; rows under their hunks change when it is shown."""
        if self.comments.get(path, ()) == comments:
            return
        self.comments[path] = comments
        if self.file is not None and self.file.path == path:
            self._rebuild_keeping_cursor()

    @property
    def line_marks(self) -> dict[int, tuple[str, str]]:
        """The gutter marks of the shown file."""
        return self.guard_marks.get(self.file.path, {}) if self.file is not None else {}

    def row_for_line(self, new_no: int) -> int | None:
        """Row showing branch-side line `new_no`, or None."""
        return row_of_line(self.rows, new_no)

    def set_hidden(self, hidden: dict[str, frozenset[int]]) -> None:
        """Draw every hunk but `hidden[path]` of each file (empty: every hunk), keeping the cursor's hunk if drawn."""
        self.hidden = hidden
        hunk = self.current_hunk_index
        self._rebuild()
        row = self.hunk_row(hunk) if hunk is not None else None
        self.cursor = row if row is not None else next((y for y, r in enumerate(self.rows) if r.kind == "hunk"), 0)
        self._announce()

    def _rebuild(self) -> None:
        f = self.file
        self.rows = [] if f is None else (split_rows(f) if self.split else unified_rows(f))
        hidden = self.hidden.get(f.path, frozenset()) if f is not None else frozenset()
        if hidden:
            self.rows = [Row("note", None, f"{len(hidden)} hunk(s) unchanged since your verdict, not shown (d shows them)"),
                         *(r for r in self.rows if r.hunk not in hidden)]
        comments = self.comments.get(f.path, ()) if f is not None else ()
        if f is not None and comments:
            self._wrap_width = self._content_width() if self.is_mounted else 0
            self.rows = with_comments(self.rows, f, comments, max(16, (self._wrap_width or 100) - GUTTER))
        self._strips.clear()
        self._update_virtual_size()
        self.refresh()

    def _update_virtual_size(self) -> None:
        """As wide as the longest line needs: in the side-by-side view, the longest side in its half."""
        self.virtual_size = content_size(self.rows, self.split, self._content_width() if self.is_mounted else 0)

    def action_pan(self, direction: int) -> None:
        """Scroll the code sideways by half the room it has (the gutter stays)."""
        width = self._content_width()
        room = side_room(width) if self.split else max(1, width - GUTTER)
        self.scroll_to(x=self.scroll_offset.x + direction * max(4, room // 2), animate=False, immediate=True)

    def _rebuild_keeping_cursor(self) -> None:
        """Rebuild the rows (comments came or went, the width changed) with the cursor on the same diff row."""
        if not self.rows:
            self._rebuild()
            return
        y = min(self.cursor, len(self.rows) - 1)
        while y > 0 and self.rows[y].kind == "comment":
            y -= 1  # a comment row may go away: hold on to the row it is under
        anchor = self.rows[y]
        self._rebuild()
        self.cursor = next((i for i, r in enumerate(self.rows) if r is anchor or r == anchor), self.cursor)

    def on_resize(self) -> None:
        if self.file is not None and self.comments.get(self.file.path) and self._content_width() != self._wrap_width:
            self._rebuild_keeping_cursor()  # comments are wrapped to the width
        elif self.split:
            self._update_virtual_size()  # how far a half scrolls depends on the width

    def watch_split(self) -> None:
        hunk = self.current_hunk_index
        self._rebuild()
        row = self.hunk_row(hunk) if hunk is not None else None
        self.cursor = row if row is not None else 0
        self.scroll_to(0, max(0, self.cursor - 2), animate=False, immediate=True)

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._theme_changed, init=False)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def _theme_changed(self) -> None:
        self._new_highlighter()
        self._strips.clear()
        self._styles.clear()
        self.refresh()

    def _new_highlighter(self) -> None:
        """A highlighter for the shown file; its lexer is built in a worker when it is new."""
        f = self.file
        self._highlighter = HunkHighlighter(f.path, self._syntax_style()) if f is not None else None
        if self._highlighter is not None and not self._highlighter.ready:
            # Building a lexer compiles every pattern of the language (~20 ms for
            # Python): the rows are drawn plain first, and again highlighted when
            # the worker reports. It starts after the paint: a thread compiling
            # patterns meanwhile would hold the GIL the paint needs.
            self.call_after_refresh(self._build_lexer, self._highlighter.path)

    @work(thread=True, exclusive=True, group="lexer", exit_on_error=False)
    def _build_lexer(self, path: str) -> None:
        lexer_for(path)
        self.post_message(self.LexerReady(path))

    @on(LexerReady)
    def _lexer_ready(self, event: LexerReady) -> None:
        if self.file is not None and self._highlighter is not None and self._highlighter.ready:
            self._strips.clear()
            self.refresh()

    def _syntax_style(self) -> str:
        try:
            theme = self.app.current_theme
        except Exception:  # not mounted yet: any sensible default
            return "monokai"
        return theme.variables.get("syntax-theme", "monokai" if theme.dark else "friendly")

    # --- cursor and hunks --------------------------------------------------

    @property
    def current_hunk_index(self) -> int | None:
        """Index of the hunk under the cursor, or None."""
        if not self.rows:
            return None
        row = self.rows[min(self.cursor, len(self.rows) - 1)]
        if row.hunk is None:
            return 0 if self.file is not None and self.file.hunks else None
        return row.hunk

    @property
    def current_hunk(self) -> Hunk | None:
        """The hunk under the cursor, or None."""
        i = self.current_hunk_index
        if self.file is None or i is None or i >= len(self.file.hunks):
            return None
        return self.file.hunks[i]

    @property
    def current_line(self) -> int | None:
        """Branch-side (else base-side) line number under the cursor."""
        if not self.rows:
            return None
        return self.rows[min(self.cursor, len(self.rows) - 1)].at_line

    def hunk_row(self, index: int) -> int | None:
        """Row of the header of hunk `index`, or None."""
        return row_of_hunk(self.rows, index)

    def goto_hunk(self, index: int) -> bool:
        """Put the cursor on hunk `index`'s header; False when there is none."""
        y = self.hunk_row(index)
        if y is None:
            return False
        self.cursor = y
        self.scroll_to(0, max(0, y - 2), animate=False, immediate=True)
        return True

    def step_hunk(self, direction: int) -> bool:
        """Move to the next (1) or previous (-1) hunk in this file; False at the edge."""
        current = self.current_hunk_index
        on_header = bool(self.rows) and self.rows[self.cursor].kind == "hunk"
        if current is None:
            return False
        if direction < 0 and not on_header and self.goto_hunk(current):
            return True
        target = current + direction
        while self.file is not None and 0 <= target < len(self.file.hunks):
            if self.goto_hunk(target):  # a hunk not drawn (set_hidden) is stepped over
                return True
            target += direction
        return False

    def cursor_moved(self) -> None:
        self._announce()

    def _announce(self) -> None:
        key = (self.file.path if self.file else None, self.current_hunk_index)
        if key != self._last_hunk:
            self._last_hunk = key
            self.post_message(self.HunkChanged(*key))

    # --- drawing -------------------------------------------------------------

    def _style(self, name: str) -> Style:
        # Component styles only change with the theme or CSS: cache them between draws.
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(f"diff--{name}")
        return style

    def notify_style_update(self) -> None:
        self._styles.clear()
        self._strips.clear()
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = int(scroll_y) + y
        width = self._content_width()
        base = self._base_style()
        if index >= len(self.rows):
            return Strip.blank(width, base)
        key = (index, width, int(scroll_x), self.split)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._render_row(self.rows[index], width, int(scroll_x))
            self._strips[key] = strip
        if index == self.cursor and self.has_focus_within:
            cursor = self._style("cursor")
            strip = Strip([Segment(s.text, (s.style or Style()) + cursor) for s in strip], strip.cell_length)
        return strip

    def _content_width(self) -> int:
        # scrollable_content_region walks styles each call; it only changes with the size
        key = (self.size, self.show_vertical_scrollbar)
        if self._width_key != key:
            self._width_key = key
            self._width = self.scrollable_content_region.width
        return self._width

    _width_key: tuple = ()
    _width: int = 0

    def _base_style(self) -> Style:
        style = self._styles.get("")
        if style is None:
            style = self._styles[""] = self.rich_style
        return style

    def _render_row(self, row: Row, width: int, scroll_x: int) -> Strip:
        """The strip of `row` as the view stands now (diff_paint.py draws it)."""
        paint = Paint(self.file, self._highlighter, self.badges, self.line_marks, self.authors, self.search,
                      self._style, self._base_style(), self.app.console)
        return paint_row(paint, row, width, scroll_x)
