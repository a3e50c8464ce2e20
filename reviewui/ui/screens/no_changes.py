"""NoChangesScreen: said plainly when the branch changes nothing against its base."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from reviewui.core.session import ReviewSession
from reviewui.ui.widgets.key_footer import KeyFooter


class NoChangesScreen(Screen[None]):
    """The branch has no commits beyond its base, or its commits change nothing."""

    BINDINGS = [Binding("q", "app.quit", "Quit", id="no_changes.quit")]

    DEFAULT_CSS = """
    NoChangesScreen { align: center middle; }
    NoChangesScreen > #message { width: auto; max-width: 90%; padding: 1 3; border: round $warning; }
    """

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session

    def compose(self) -> ComposeResult:
        t = self.session.target
        if t.is_empty:
            why = "has no commits beyond its base"
        else:
            why = f"has {t.commits} commit{'s' if t.commits != 1 else ''} but they change nothing"
        yield Static(
            Content.assemble(
                ("No changes\n\n", "bold $warning"),
                (t.branch, "bold"),
                f" {why} ({t.base_ref}@{t.base[:7]}).\n",
                "There is nothing to review: a run that reports done with no change is not done.",
            ),
            id="message",
        )
        yield KeyFooter()
