"""InterdiffPane: beside the diff, what changed in the hunk under the cursor since your verdict.

The interdiff is a diff of the hunk's text at the verdict against its text
now (core/delta/match.interdiff); each line keeps its own `+`/`-` mark under
the interdiff's, as a range-diff shows. Drawn as literal text, control
characters made visible: it is the branch's content.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from reviewui.core.safe_text import visible

if TYPE_CHECKING:
    from reviewui.core.delta.model import HunkDelta

_SAID = {
    "unchanged": "unchanged since your verdict",
    "new": "new since your verdict: nothing to compare it with",
    "changed": "changed since your verdict:",
}


class InterdiffPane(VerticalScroll):
    """The interdiff of one hunk (or why there is none)."""

    DEFAULT_CSS = """
    InterdiffPane { width: 45%; border-left: solid $panel-lighten-2; padding: 0 1; }
    InterdiffPane.-hidden { display: none; }
    InterdiffPane > Static { width: auto; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        self._text = Static("", id="interdiff-text")
        super().__init__(self._text, id=id, classes=classes)
        self._shown = Content("")

    def show(self, entry: HunkDelta | None) -> None:
        """Show `entry`'s interdiff (a changed hunk), or a line saying what it is."""
        if entry is None:
            content = Content.styled("no hunk under the cursor", "$text-muted")
        else:
            parts: list[Content] = [Content.styled(visible(f"{entry.header}  {_SAID[entry.state]}"), "bold")]
            for line in entry.interdiff.splitlines() if entry.state == "changed" else ():
                tone = ("$accent" if line.startswith(("@@", "---", "+++")) else "$success" if line.startswith("+")
                        else "$error" if line.startswith("-") else "")
                parts.append(Content.styled(visible(line), tone) if tone else Content(visible(line)))
            content = Content("\n").join(parts)
        self._shown = content
        self._text.update(content)
        self.scroll_home(animate=False)

    @property
    def text(self) -> str:
        """What the pane shows, as plain text (for tests and screen readers)."""
        return self._shown.plain
