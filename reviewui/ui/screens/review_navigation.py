"""The review screen's navigation part: hunks and files, unified or side by side.

Its keys come first in the footer and the help: they are the ones a
reviewer needs most.
"""

from __future__ import annotations


from textual.binding import Binding
from textual.screen import Screen

from reviewui.core.safe_text import visible
from reviewui.ui.screens.review_part import ReviewHost, ReviewPart



class NavigationPart(ReviewPart):
    """Moving between hunks and files."""

    BINDINGS = [
        Binding("n", "next_hunk", "Next hunk", id="review.next_hunk", tooltip="Next hunk, across files"),
        Binding("p", "prev_hunk", "Prev hunk", id="review.prev_hunk", tooltip="Previous hunk, across files"),
        Binding("right_square_bracket", "next_file", "Next file", id="review.next_file", key_display="]"),
        Binding("left_square_bracket", "prev_file", "Prev file", id="review.prev_file", key_display="["),
        Binding("s", "toggle_split", "Side-by-side", id="review.split", tooltip="Toggle unified / side-by-side"),
        Binding("question_mark", "help", "Help", id="review.help", key_display="?"),
        Binding("L", "file_list", "File list", id="review.file_list",
                tooltip="File list: fitted to its entries → wide → hidden → fitted"),
    ]

    FILE_LIST_MODES = ("fit", "wide", "hidden")
    """What `L` cycles through."""

    MIN_DIFF = 40
    """Columns the diff keeps beside the file list (and the fixtures pane): the list narrows, or gives way, to leave them."""

    def __init__(self, screen: Screen[None], host: ReviewHost) -> None:
        super().__init__(screen, host)
        self.file_list_mode = "fit"
        """How the file list is shown: fitted to its widest entry (within limits), wide, or hidden."""

    def cycle_file_list(self) -> None:
        """Fitted → wide → hidden → fitted."""
        modes = self.FILE_LIST_MODES
        self.file_list_mode = modes[(modes.index(self.file_list_mode) + 1) % len(modes)]
        if self.file_list_mode == "hidden" and self.host.file_list.has_focus:
            self.host.diff_view.focus()
        self.fit_sidebar()

    def fit_sidebar(self) -> None:
        """Size the file list for its mode and the screen: never under 20 cells, never over 40 % (wide: 70 %).

        The diff keeps MIN_DIFF columns whatever the mode (beside the fixtures pane too): the
        list narrows to leave them, and where even 20 cells would not, it gives way (hidden
        until there is room). At 88 columns a wide list once took 61 and so hid itself:
        `L` then seemed to close the list instead of widening it.
        """
        sidebar = self.screen.query_one("#sidebar")
        total = self.screen.size.width or self.screen.app.size.width
        wanted = self.host.file_list.wanted_width() + 1  # and the border
        share = 0.7 if self.file_list_mode == "wide" else 0.4
        top = max(20, int(total * share))
        if self.file_list_mode == "wide":
            wanted = max(wanted, int(total * 0.5))
        room = total - self.host.fixtures_part.width_beside(total) - self.MIN_DIFF
        width = max(20, min(wanted, top, room))
        crowded = room < 20
        hidden = self.file_list_mode == "hidden" or crowded
        if hidden and self.host.file_list.has_focus:
            self.host.diff_view.focus()
        sidebar.set_class(hidden, "-hidden")
        if sidebar.styles.width is None or sidebar.styles.width.value != width:
            sidebar.styles.width = width

    def show(self, path: str, hunk: int | None = None) -> None:
        """Show file `path` with the cursor on hunk `hunk` (the list follows)."""
        view = self.host.diff_view
        if view.file is None or view.file.path != path:
            f = self.session.diff.file(path)
            if f is None:
                return
            view.show_file(f, hunk)
            self.host.evidence_changed(f.path)
            self.host.file_list.select_path(f.path)
        elif hunk is not None:
            view.goto_hunk(hunk)

    def jump_to(self, path: str, line: int | None) -> None:
        """Show `path` with the cursor on the hunk holding branch-side `line` (or the first)."""
        f = self.session.diff.file(path)
        if f is None:
            self.screen.notify(f"{visible(path)} is not changed on this branch", severity="warning", markup=False)
            return
        index = next((h.index for h in f.hunks if h.contains(line)), 0)
        self.show(path, index)

    def file_highlighted(self, path: str | None) -> None:
        """The file list's cursor moved: the diff follows."""
        view = self.host.diff_view
        if path and (view.file is None or view.file.path != path):
            view.show_file(self.session.diff.file(path))
            self.host.evidence_changed(path)

    def step_hunk(self, direction: int) -> None:
        """Next (1) or previous (-1) hunk; past a file's end, the nearest hunk of the next file with hunks."""
        if self.host.diff_view.step_hunk(direction):
            return
        paths = self.host.file_list.paths
        view = self.host.diff_view
        current = view.file.path if view.file else None
        i = (paths.index(current) if current in paths else -1) + direction
        while 0 <= i < len(paths):
            f = self.session.diff.file(paths[i])
            if f is not None and f.hunks:
                self.show(f.path, 0 if direction > 0 else len(f.hunks) - 1)
                return
            i += direction
        self.screen.notify("No more hunks", timeout=2)

    def step_file(self, direction: int) -> None:
        """Next (1) or previous (-1) file."""
        path = self.host.file_list.step(direction)
        if path:
            self.show(path)
        elif direction > 0:
            self.screen.notify("last file: ] has nowhere to go ([ goes back)", timeout=3)
        else:
            self.screen.notify("first file: [ has nowhere to go (] goes on)", timeout=3)

    def toggle_split(self) -> None:
        """Unified <-> side by side."""
        view = self.host.diff_view
        view.split = not view.split
