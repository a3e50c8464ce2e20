"""QueueTable: thousands of rows in fixed columns, of which only the visible ones are ever measured or drawn.

Textual's DataTable measures every cell of every row before its first paint
(10 000 branches × 12 columns took seconds); here each column has a fixed
width, so setting the rows costs nothing per row, a row's cells are made
when it is first drawn, and `render_line` draws the few rows on screen, each
from its cells' `Text`. Cells are `Text`, never
strings: nothing from the repository is read as markup. The header stays at
the top; the table scrolls both ways.
"""

from __future__ import annotations

from typing import Callable, Sequence

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

GAP = 1
"""Cells between columns."""


class QueueTable(ScrollView, can_focus=True):
    """Rows of `Text` cells in fixed-width columns, drawn a visible line at a time, with a row cursor."""

    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False, id="queue_list.up", tooltip="Previous row"),
        Binding("down", "move(1)", "Down", show=False, id="queue_list.down", tooltip="Next row"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="queue_list.page_up", tooltip="A screenful up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="queue_list.page_down",
                tooltip="A screenful down"),
        Binding("home", "move_to(0)", "First", show=False, id="queue_list.first", tooltip="The first row"),
        Binding("end", "move_to(-1)", "Last", show=False, id="queue_list.last", tooltip="The last row"),
        Binding("enter", "select", "Open", id="queue_list.open",  # shown: it hides the screen's own `enter`
                tooltip="Open the review of the branch under the cursor"),
    ]

    COMPONENT_CLASSES = {"queue-table--header", "queue-table--cursor", "queue-table--odd"}

    DEFAULT_CSS = """
    QueueTable { background: $surface; }
    QueueTable > .queue-table--header { text-style: bold; background: $panel; }
    QueueTable > .queue-table--cursor { background: $block-cursor-blurred-background; }
    QueueTable:focus > .queue-table--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    QueueTable > .queue-table--odd { background: $surface-lighten-1; }
    """

    cursor_row: reactive[int] = reactive(0, always_update=True)
    """The row under the cursor (0 when there are none)."""

    class RowHighlighted(Message):
        """The cursor moved to another row."""

        def __init__(self, table: QueueTable, row: int) -> None:
            super().__init__()
            self.table = table
            self.cursor_row = row

    class RowSelected(Message):
        """The row under the cursor was chosen (enter, or a click on it)."""

        def __init__(self, table: QueueTable, row: int) -> None:
            super().__init__()
            self.table = table
            self.cursor_row = row

    def __init__(self, columns: Sequence[tuple[str, int]], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns = list(columns)
        """(label, width) of each column, in order."""
        self._count = 0
        self._cells_of: Callable[[int], tuple[Text, ...]] = lambda n: ()
        self._made: dict[int, tuple[Text, ...]] = {}
        self._width = sum(w for _, w in self.columns) + GAP * max(0, len(self.columns) - 1)

    # --- data -----------------------------------------------------------------

    @property
    def row_count(self) -> int:
        """How many rows the table holds."""
        return self._count

    def set_rows(self, count: int, cells_of: Callable[[int], tuple[Text, ...]], cursor: int | None = None) -> None:
        """Hold `count` rows whose cells `cells_of(n)` makes when row n is first drawn (nothing is measured:
        the columns' widths are fixed); the cursor moves to `cursor`."""
        self._count, self._cells_of, self._made = count, cells_of, {}
        self.virtual_size = Size(self._width, count + 1)
        self.move_cursor(self.cursor_row if cursor is None else cursor)
        self.refresh()

    def cell(self, row: int, column: int) -> Text:
        """The cell at (`row`, `column`)."""
        return self._row(row)[column]

    def _row(self, n: int) -> tuple[Text, ...]:
        made = self._made.get(n)
        if made is None:
            if len(self._made) > 4096:
                self._made.clear()
            made = self._made[n] = self._cells_of(n)
        return made

    def move_cursor(self, row: int) -> None:
        """Put the cursor on `row` (clamped) and scroll it into view."""
        last = self._count - 1
        self.cursor_row = max(0, min(last, row)) if last >= 0 else 0

    def watch_cursor_row(self, old: int, new: int) -> None:
        self._scroll_to_cursor()
        self.refresh()
        if self._count:
            self.post_message(self.RowHighlighted(self, new))

    def _scroll_to_cursor(self) -> None:
        shown = max(1, self.scrollable_content_region.height - 1)
        top = round(self.scroll_y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + shown:
            self.scroll_to(y=self.cursor_row - shown + 1, animate=False, immediate=True)

    # --- keys and mouse ---------------------------------------------------------

    def action_move(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step)

    def action_page(self, pages: int) -> None:
        self.move_cursor(self.cursor_row + pages * max(1, self.scrollable_content_region.height - 1))

    def action_move_to(self, row: int) -> None:
        self.move_cursor(row if row >= 0 else self._count - 1)

    def action_select(self) -> None:
        if self._count:
            self.post_message(self.RowSelected(self, self.cursor_row))

    def on_click(self, event: events.Click) -> None:
        row = round(self.scroll_y) + event.y - 1
        if event.y < 1 or not 0 <= row < self._count:
            return
        if row == self.cursor_row:
            self.action_select()
        else:
            self.move_cursor(row)

    def on_resize(self) -> None:
        self._scroll_to_cursor()

    # --- drawing ----------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x = round(self.scroll_x)
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            style = base + self.get_component_rich_style("queue-table--header")
            line = self._line(tuple(Text(label) for label, _ in self.columns))
        else:
            index = round(self.scroll_y) + y - 1
            if not 0 <= index < self._count:
                return Strip.blank(width, base)
            style = base
            if index % 2:
                style += self.get_component_rich_style("queue-table--odd")
            if index == self.cursor_row:
                style += self.get_component_rich_style("queue-table--cursor")
            line = self._line(self._row(index))
        segments = [Segment(s.text, style + s.style if s.style else style, s.control)
                    for s in line.render(self.app.console, end="")]
        return Strip(segments).crop(scroll_x, scroll_x + width).extend_cell_length(width, style)

    def _line(self, cells: Sequence[Text]) -> Text:
        line = Text(no_wrap=True, end="")
        for n, ((_, width), cell) in enumerate(zip(self.columns, cells, strict=False)):
            piece = cell.copy()
            piece.truncate(width, overflow="ellipsis", pad=True)
            if n:
                line.append(" " * GAP)
            line.append_text(piece)
        return line

