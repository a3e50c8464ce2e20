"""ReviewScreen: the file list, the diff, and every review action on them.

Attributes flow down (the screen tells the diff view which file and which
badges to show); messages flow up (the diff view reports the hunk under
the cursor). Slow work is started here in workers; see reviewui/ui/workers.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static

from reviewui.core.session import ReviewSession
from reviewui.ui.widgets.diff_view import DiffView
from reviewui.ui.widgets.file_list import FileList
from reviewui.ui.widgets.review_header import ReviewHeader


class ReviewScreen(Screen[None]):
    """The main review screen."""

    CSS_PATH = "review.tcss"

    BINDINGS = [
        Binding("n", "next_hunk", "Next hunk", tooltip="Next hunk, across files"),
        Binding("p", "prev_hunk", "Prev hunk", tooltip="Previous hunk, across files"),
        Binding("right_square_bracket", "next_file", "Next file", key_display="]"),
        Binding("left_square_bracket", "prev_file", "Prev file", key_display="["),
        Binding("s", "toggle_split", "Side-by-side", tooltip="Toggle unified / side-by-side"),
        Binding("question_mark", "help", "Help", key_display="?"),
    ]

    def __init__(self, session: ReviewSession, initial_file: str | None = None) -> None:
        super().__init__()
        self.session = session
        self.initial_file = initial_file

    def compose(self) -> ComposeResult:
        yield ReviewHeader(self.session, id="header")
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield FileList(self.session.diff, id="files")
            with Vertical(id="main"):
                yield DiffView(id="diff")
        yield Static("", id="status")
        yield Footer()

    @property
    def diff_view(self) -> DiffView:
        """The diff widget."""
        return self.query_one("#diff", DiffView)

    @property
    def file_list(self) -> FileList:
        """The file list widget."""
        return self.query_one("#files", FileList)

    def on_mount(self) -> None:
        files = self.file_list
        if self.initial_file:
            f = self.session.diff.file(self.initial_file)
            if f is not None:
                files.select_path(f.path)
        path = files.highlighted_path
        self.diff_view.show_file(self.session.diff.file(path) if path else None)
        self.diff_view.focus()
        self._preload_diff()

    @work(thread=True, exclusive=True, group="preload", exit_on_error=False)
    def _preload_diff(self) -> None:
        """Fetch every patch in one git call after the first paint, so later files open from memory."""
        self.session.diff.preload()

    # --- file selection ------------------------------------------------------

    @on(OptionList.OptionHighlighted, "#files")
    def _file_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        path = event.option.id
        view = self.diff_view
        if path and (view.file is None or view.file.path != path):
            view.show_file(self.session.diff.file(path))

    def show(self, path: str, hunk: int | None = None) -> None:
        """Show file `path` with the cursor on hunk `hunk` (the list follows)."""
        view = self.diff_view
        if view.file is None or view.file.path != path:
            f = self.session.diff.file(path)
            if f is None:
                return
            view.show_file(f, hunk)
            self.file_list.select_path(f.path)
        elif hunk is not None:
            view.goto_hunk(hunk)

    # --- actions -----------------------------------------------------------

    def action_next_hunk(self) -> None:
        """Next hunk; past the last hunk of a file, the first hunk of the next file with hunks."""
        if self.diff_view.step_hunk(1):
            return
        self._jump_file(1, first=True)

    def action_prev_hunk(self) -> None:
        """Previous hunk; before the first, the last hunk of the previous file with hunks."""
        if self.diff_view.step_hunk(-1):
            return
        self._jump_file(-1, first=False)

    def _jump_file(self, direction: int, first: bool) -> None:
        paths = self.file_list.paths
        current = self.diff_view.file.path if self.diff_view.file else None
        i = paths.index(current) if current in paths else -1
        i += direction
        while 0 <= i < len(paths):
            f = self.session.diff.file(paths[i])
            if f is not None and f.hunks:
                self.show(f.path, 0 if first else len(f.hunks) - 1)
                return
            i += direction
        self.notify("No more hunks", timeout=2)

    def action_next_file(self) -> None:
        path = self.file_list.step(1)
        if path:
            self.show(path)

    def action_prev_file(self) -> None:
        path = self.file_list.step(-1)
        if path:
            self.show(path)

    def action_toggle_split(self) -> None:
        self.diff_view.split = not self.diff_view.split

    def action_help(self) -> None:
        from reviewui.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self))

    def set_status(self, text: str) -> None:
        """Show a line in the status bar (progress of long work, results)."""
        from textual.content import Content

        self.query_one("#status", Static).update(Content(text))
