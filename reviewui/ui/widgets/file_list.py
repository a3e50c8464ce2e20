"""FileList: the changed files grouped as Source / Tests / Other.

Each entry shows status, path, +/− counts and a short summary of what is
known about the file (bite verdicts, findings, reviewed hunks). A Line API
list: a row is drawn only when it is in sight, one line per file (a path
too long for the column loses its start, never its name), so a branch of
thousands of files costs no more to show than one of ten. Paths are drawn
as literal text: a file called `[red]x` shows exactly that.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from textual import events
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from reviewui.core.diff import Diff
from reviewui.core.roles import ROLE_ORDER
from reviewui.core.file_diff import FileDiff
from reviewui.ui.widgets.line_cursor import LineCursorView
from reviewui.core.safe_text import visible

TITLES = {"source": "Source", "test": "Tests", "other": "Other"}
GROUPS = tuple((role, TITLES[role]) for role in ROLE_ORDER)
"""The list's groups, in the order every review lists roles (the first file is what Diff.first_listed names)."""
STATUS_MARK = {"added": "A", "deleted": "D", "modified": "M", "renamed": "R", "mode": "X"}
MIN_PATH = 12  # a path is never cut shorter than this: the name matters more than the counts


@dataclass(frozen=True)
class ListRow:
    """One row of the list: a group title (path None) or a file."""

    path: str | None
    title: str = ""


class FileList(LineCursorView):
    """The changed files; moving onto one reports it with FileHighlighted."""

    COMPONENT_CLASSES = {"file-list--cursor", "file-list--group"}
    DEFAULT_CSS = """
    FileList { width: 1fr; height: 1fr; }
    FileList > .file-list--cursor { background: $block-cursor-blurred-background; }
    FileList:focus > .file-list--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    FileList > .file-list--group { color: $text-muted; text-style: bold; }
    """

    class FileHighlighted(Message):
        """The cursor moved onto the file at `path`."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    def __init__(self, diff: Diff, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.diff = diff
        self.summaries: dict[str, Content] = {}
        self.paths: list[str] = []
        self.rows: list[ListRow] = []
        self._row_of: dict[str, int] = {}
        self._files: dict[str, FileDiff] = {}
        self._needs: dict[str, int] | None = None
        """Path -> cells its entry needs without a summary (wanted_width), made on first use: the
        diff's files never change, only their summaries."""
        self._announced: str | None = None
        self.shown: frozenset[str] | None = None
        """Only these paths are listed (the since-verdict view's `d`); None lists every file."""

    def on_mount(self) -> None:
        self.rebuild()

    def rebuild(self) -> None:
        """Lay out the groups and entries again (keeps the highlighted file)."""
        keep = self.highlighted_path
        rows: list[ListRow] = []
        for role, title in GROUPS:
            files = [f for f in self.diff.files if f.role == role and (self.shown is None or f.path in self.shown)]
            if files:
                rows.append(ListRow(None, f"{title} ({len(files)})"))
                rows.extend(ListRow(f.path) for f in files)
        self.rows = rows
        self._files = {f.path: f for f in self.diff.files}
        self.paths = [r.path for r in rows if r.path is not None]
        self._row_of = {r.path: y for y, r in enumerate(rows) if r.path is not None}
        self.virtual_size = Size(self.size.width, len(rows))
        self.refresh()
        if keep and keep in self._row_of:
            self.select_path(keep)
        elif self.paths:
            self.select_path(self.paths[0])

    def group_titles(self) -> list[str]:
        """The group titles in order, e.g. `Source (3)`."""
        return [r.title for r in self.rows if r.path is None]

    # --- the cursor ----------------------------------------------------------

    @property
    def highlighted_path(self) -> str | None:
        """Path of the highlighted file, or None."""
        if not self.rows or not 0 <= self.cursor < len(self.rows):
            return None
        return self.rows[self.cursor].path

    def select_path(self, path: str) -> bool:
        """Highlight the entry of `path`; False when it is not listed."""
        y = self._row_of.get(path)
        if y is None:
            return False
        super()._move(y)
        return True

    def step(self, direction: int) -> str | None:
        """Highlight the next (1) or previous (-1) file; returns its path or None at the edge."""
        current = self.highlighted_path
        if current not in self._row_of:
            return None
        i = self.paths.index(current) + direction
        if not 0 <= i < len(self.paths):
            return None
        self.select_path(self.paths[i])
        return self.paths[i]

    def _move(self, cursor: int) -> None:
        # Group titles are not stops: go on past them, or back if nothing is beyond.
        if not self.paths:
            return
        cursor = max(0, min(cursor, len(self.rows) - 1))
        direction = 1 if cursor >= self.cursor else -1
        for step in (direction, -direction):
            y = cursor
            while 0 <= y < len(self.rows):
                if self.rows[y].path is not None:
                    super()._move(y)
                    return
                y += step

    def cursor_moved(self) -> None:
        path = self.highlighted_path
        if path is not None and path != self._announced:
            self._announced = path
            self.post_message(self.FileHighlighted(path))

    def on_click(self, event: events.Click) -> None:
        y = int(self.scroll_offset.y) + event.y
        if 0 <= y < len(self.rows) and self.rows[y].path is not None:
            self.focus()
            super()._move(y)

    # --- summaries -------------------------------------------------------------

    def set_summary(self, path: str, summary: Content | None) -> None:
        """Set the short summary drawn after a file's counts."""
        if summary is None:
            self.summaries.pop(path, None)
        else:
            self.summaries[path] = summary
        y = self._row_of.get(path)
        if y is not None:
            self.refresh_lines(y - int(self.scroll_offset.y))

    # --- drawing -----------------------------------------------------------------

    def _counts(self, f: FileDiff) -> Content:
        if f.binary:
            return Content.styled("bin", "$text-muted")
        return Content.assemble((f"+{f.added}", "$success"), ("/", "$text-muted"), (f"−{f.removed}", "$error"))

    def wanted_width(self) -> int:
        """Cells the widest entry needs whole (status, path, counts and summary), plus the cursor's margin."""
        if self._needs is None:  # the sidebar is fitted on every resize: the entries' own part once
            self._needs = {f.path: 3 + len(visible(f.path)) + 1 + _counts_width(f) for f in self.diff.files}
        widest = 0
        for path, need in self._needs.items():
            summary = self.summaries.get(path)
            widest = max(widest, need + (1 + summary.cell_length if summary else 0))
        titles = max((len(r.title) + 1 for r in self.rows if r.path is None), default=0)
        return max(widest, titles) + 1

    def entry(self, f: FileDiff, width: int) -> Content:
        """The text of `f`'s row at `width` cells: the summary loses whole pieces, then the path its start."""
        status = f.display_status
        tone = {"added": "$success", "deleted": "$error", "renamed": "$accent"}.get(status, "$warning")
        counts = self._counts(f)
        path = visible(f.path)
        summary = self.summaries.get(f.path)
        need_path = min(len(path), MIN_PATH)
        if summary is not None and 3 + need_path + 1 + counts.cell_length + 1 + summary.cell_length > width:
            summary = _fit_pieces(summary, width - 3 - need_path - 1 - counts.cell_length - 1)
        after = Content.assemble(" ", counts, *((" ", summary) if summary else ()))
        room = width - 3 - after.cell_length  # " M " before the path
        if len(path) > room:
            keep = max(room, MIN_PATH) - 1
            path = "…" + path[-keep:] if keep > 0 else path
        return Content.assemble(" ", (STATUS_MARK.get(status, "?"), f"bold {tone}"), " ", path, after)

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_offset.y) + y
        width = self.scrollable_content_region.width
        base = self.visual_style
        if not 0 <= index < len(self.rows):
            return Strip.blank(width, base.rich_style)
        row = self.rows[index]
        if row.path is None:
            base = self.get_visual_style("file-list--group")
            content = Content(" " + row.title)
        else:
            if index == self.cursor:
                base = self.get_visual_style("file-list--cursor")
            f = self._files.get(row.path)
            content = self.entry(f, width) if f is not None else Content(" " + visible(row.path))
        segments = [
            Segment(text, style.rich_style)
            for text, style in content.render(base, end="", parse_style=self.app.stylesheet.parse_style)
        ]
        return Strip(segments).crop_extend(0, width, base.rich_style)


def _counts_width(f: FileDiff) -> int:
    """Cells `FileList._counts` takes for `f` (`bin`, or `+added/−removed`: one cell each), without
    building it: the sidebar is fitted to every file's entry before the first paint."""
    return 3 if f.binary else len(str(f.added)) + len(str(f.removed)) + 3


def _fit_pieces(summary: Content, room: int) -> Content | None:
    """The summary's leading whole pieces (one styled span each) that fit in `room` cells, with a `…` after them."""
    ends = sorted({span.end for span in summary.spans})
    for end in reversed(ends):
        piece = summary[:end].rstrip()
        if piece.cell_length + 2 <= room:
            return piece + Content.styled(" …", "$text-muted")
    return Content.styled("…", "$text-muted") if room >= 1 else None
