"""LineCursorView: a Line API view with a cursor row that the view keeps in sight.

The diff and the transcript are both long lists of rows drawn only where
visible, moved through with the same keys; this holds what they share.
Subclasses keep their rows in `self.rows` and may override `cursor_moved`.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.reactive import reactive
from textual.scroll_view import ScrollView


class LineCursorView(ScrollView, can_focus=True):
    """Cursor movement over `rows`, scrolling to keep the cursor visible."""

    BINDINGS = [
        Binding("j,down", "cursor_down", "Down", id="cursor.down", show=False),
        Binding("k,up", "cursor_up", "Up", id="cursor.up", show=False),
        Binding("pagedown", "page_down", "Page down", id="cursor.page_down", show=False),
        Binding("pageup", "page_up", "Page up", id="cursor.page_up", show=False),
        Binding("home", "cursor_home", "Top", id="cursor.top", show=False),
        Binding("end", "cursor_end", "Bottom", id="cursor.bottom", show=False),
    ]

    cursor: reactive[int] = reactive(0)
    rows: list[Any]

    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self.rows) - 1)) if self.rows else 0

    def watch_cursor(self, old: int, new: int) -> None:
        top = int(self.scroll_offset.y)
        self.refresh_lines(old - top)
        self.refresh_lines(new - top)
        self.cursor_moved()

    def cursor_moved(self) -> None:
        """Called after every cursor move (for subclasses to report it)."""

    def follow(self) -> None:
        """Scroll just enough to bring the cursor row into view."""
        height = self.scrollable_content_region.height or 1
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def _move(self, cursor: int) -> None:
        self.cursor = cursor
        self.follow()

    def action_cursor_down(self) -> None:
        self._move(self.cursor + 1)

    def action_cursor_up(self) -> None:
        self._move(self.cursor - 1)

    def action_page_down(self) -> None:
        self._move(self.cursor + max(1, self.scrollable_content_region.height - 1))

    def action_page_up(self) -> None:
        self._move(self.cursor - max(1, self.scrollable_content_region.height - 1))

    def action_cursor_home(self) -> None:
        self._move(0)

    def action_cursor_end(self) -> None:
        self._move(len(self.rows) - 1)
