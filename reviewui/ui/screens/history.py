"""HistoryScreen: the verdicts recorded for this branch, on this head or earlier ones, and the notes' foreign text.

Only a review's own row starts at the left edge. Its reason, and any foreign
text of the notes (text no review holds, or that follows a signature and so
is covered by none), is indented and marked on every line, escaped, wrapped
here and never by the terminal (`text-wrap: nowrap`; a long row scrolls
sideways): nothing a note holds can draw a line that passes for a review.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from reviewui.core.notes.verdicts import marked_lines
from reviewui.core.safe_text import visible
from reviewui.ui.widgets.key_footer import ModalFooter

if TYPE_CHECKING:
    from reviewui.core.evidence import HistoryRow
    from reviewui.core.notes.view import ForeignText

RELATION = {
    "this-head": ("on this head", "$success"),
    "same-patch": ("earlier head, same patch", "$success"),
    "different-patch": ("earlier head, outdated by rework", "$warning"),
}
REASON_MARK = "          \u2502 "
"""What starts every line of a reason: under the row's text, marked `│`."""
FOREIGN_MARK = "    ! "
"""What starts every line of foreign text."""
WIDTH = 92
"""Where reasons and foreign text are wrapped (the panel is 100 wide, less padding and border)."""


class HistoryScreen(ModalScreen[None]):
    """A list of earlier verdicts, each saying whether it still applies, who signed it and where it came from."""

    BINDINGS = [Binding("escape,v,q", "dismiss", "Close", id="history.close")]

    DEFAULT_CSS = """
    HistoryScreen { align: center middle; }
    HistoryScreen > VerticalScroll {
        width: 100; max-width: 95%; height: 70%; padding: 1 2;
        background: $panel; border: round $accent; overflow-x: auto;
    }
    HistoryScreen Static { text-wrap: nowrap; width: auto; min-width: 100%; }
    """

    def __init__(self, rows: Sequence[HistoryRow], foreign: Sequence[ForeignText] = ()) -> None:
        super().__init__()
        self.rows = list(rows)
        self.foreign = list(foreign)

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Content("\n").join(self._review_lines()), id="history-text")
            if self.foreign:
                yield Static(Content("\n").join(self._foreign_lines()), id="history-foreign")
        yield ModalFooter()

    def _review_lines(self) -> list[Content]:
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
                    (visible(signed), "$success" if signed.startswith("signed by") else "$warning"),
                )
            )
            lines.extend(Content.assemble((line, "$text-muted")) for line in marked_lines(review.reason, REASON_MARK, WIDTH))
        return lines

    def _foreign_lines(self) -> list[Content]:
        lines = [Content.assemble(("Foreign text in these notes: no signature covers it, it is not a review",
                                   "bold $warning"))]
        for f in self.foreign:
            lines.append(Content.assemble((f"  on @{visible(f.commit[:7])}, {visible(f.why)}:", "$warning")))
            lines.extend(Content.assemble((line, "$text-muted")) for line in marked_lines(f.text, FOREIGN_MARK, WIDTH))
        return lines
