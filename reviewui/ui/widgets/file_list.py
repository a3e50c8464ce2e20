"""FileList: the changed files grouped as Source / Tests / Other.

Each entry shows status, path, +/− counts and a short summary of what is
known about the file (bite verdicts, findings, reviewed hunks). Paths are
drawn as literal text: a file called `[red]x` shows exactly that.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from reviewui.core.diff import Diff, FileDiff

GROUPS = (("source", "Source"), ("test", "Tests"), ("other", "Other"))
STATUS_MARK = {"added": "A", "deleted": "D", "modified": "M", "renamed": "R", "mode": "X"}


class FileList(OptionList):
    """The changed files; highlighting one shows its diff."""

    DEFAULT_CSS = """
    FileList { width: 1fr; height: 1fr; border: none; }
    """

    def __init__(self, diff: Diff, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.diff = diff
        self.summaries: dict[str, Content] = {}
        self.paths: list[str] = []

    def on_mount(self) -> None:
        self.rebuild()

    def rebuild(self) -> None:
        """Lay out the groups and entries again (keeps the highlighted file)."""
        keep = self.highlighted_path
        options: list[Option] = []
        self.paths = []
        for role, title in GROUPS:
            files = [f for f in self.diff.files if f.role == role]
            if not files:
                continue
            options.append(Option(Content.assemble((f"{title} ({len(files)})", "bold $text-muted")), disabled=True))
            for f in files:
                options.append(Option(self._prompt(f), id=f.path))
                self.paths.append(f.path)
        self.set_options(options)
        if keep:
            self.select_path(keep)
        elif self.paths:
            self.select_path(self.paths[0])

    def _prompt(self, f: FileDiff) -> Content:
        status = f.display_status
        tone = {"added": "$success", "deleted": "$error", "renamed": "$accent"}.get(status, "$warning")
        parts: list[str | tuple[str, str] | Content] = [
            (STATUS_MARK.get(status, "?"), f"bold {tone}"),
            " ",
            f.path,
            " ",
        ]
        if f.binary:
            parts.append(("bin", "$text-muted"))
        else:
            parts.append((f"+{f.added}", "$success"))
            parts.append(("/", "$text-muted"))
            parts.append((f"−{f.removed}", "$error"))
        summary = self.summaries.get(f.path)
        if summary:
            parts.extend([" ", summary])
        return Content.assemble(*parts)

    @property
    def highlighted_path(self) -> str | None:
        """Path of the highlighted file, or None."""
        opt = self.highlighted_option
        return opt.id if opt is not None else None

    def select_path(self, path: str) -> bool:
        """Highlight the entry of `path`; False when it is not listed."""
        try:
            self.highlighted = self.get_option_index(path)
        except Exception:
            return False
        return True

    def set_summary(self, path: str, summary: Content | None) -> None:
        """Set the short summary drawn after a file's counts."""
        if summary is None:
            self.summaries.pop(path, None)
        else:
            self.summaries[path] = summary
        f = self.diff.file(path)
        if f is not None and path in self.paths:
            self.replace_option_prompt(path, self._prompt(f))

    def step(self, direction: int) -> str | None:
        """Highlight the next (1) or previous (-1) file; returns its path or None at the edge."""
        current = self.highlighted_path
        if current not in self.paths:
            return None
        i = self.paths.index(current) + direction
        if not 0 <= i < len(self.paths):
            return None
        self.select_path(self.paths[i])
        return self.paths[i]
