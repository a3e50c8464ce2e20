"""HistoryScreen: the verdicts recorded for this branch, on this head or earlier ones."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from reviewui.core.notes.model import Review
from reviewui.core.safe_text import visible
from reviewui.ui.widgets.key_footer import ModalFooter

RELATION = {
    "this-head": ("on this head", "$success"),
    "same-patch": ("earlier head, same patch", "$success"),
    "different-patch": ("earlier head, the change differs since", "$warning"),
}


class HistoryScreen(ModalScreen[None]):
    """A list of earlier verdicts, each saying whether it still applies and who signed it."""

    BINDINGS = [Binding("escape,v,q", "dismiss", "Close")]

    DEFAULT_CSS = """
    HistoryScreen { align: center middle; }
    HistoryScreen > VerticalScroll {
        width: 100; max-width: 95%; height: 70%; padding: 1 2;
        background: $panel; border: round $accent;
    }
    """

    def __init__(self, rows: list[tuple[Review, str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        lines: list[Content] = [Content.assemble(("Verdict history", "bold $accent"))]
        if not self.rows:
            lines.append(Content.assemble(("No verdicts recorded for this branch yet.", "$text-muted")))
        for review, relation, signed in self.rows:
            label, tone = RELATION.get(relation, (relation, "$text-muted"))
            verdict = review.verdict
            lines.append(
                Content.assemble(
                    (f"{verdict:<8}", f"bold {'$success' if verdict == 'approve' else '$error'}"),
                    f" {review.at_iso()}  {visible(review.reviewer)}  @{visible(review.head[:7])}  ",
                    (label, tone),
                    "  ",
                    (signed, "$success" if signed.startswith("signed by") else "$warning"),
                )
            )
            if review.reason:
                lines.append(Content("          " + visible(review.reason, multiline=True)))
        with VerticalScroll():
            yield Static(Content("\n").join(lines), id="history-text")
        yield ModalFooter()
