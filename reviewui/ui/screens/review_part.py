"""ReviewPart: the base of the review screen's parts, one per concern (bites, verdicts, transcript …).

A part owns its state and its bindings; the screen composes the parts,
wires its keys and messages to them, and asks every part in its one
`check_action`. A part reaches widgets through the screen and the
review's evidence through the session's ledger; it never reaches into
another part's state except through that part's methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, ClassVar

from textual.binding import Binding
from textual.worker import Worker

from reviewui.core.session import ReviewSession

if TYPE_CHECKING:
    from reviewui.core.evidence import EvidenceLedger
    from reviewui.ui.screens.review import ReviewScreen


class ReviewPart:
    """One concern of the review screen: its state, its keys, its workers."""

    BINDINGS: ClassVar[list[Binding]] = []
    """The keys of this part (merged into the screen's bindings in the screen's order)."""

    def __init__(self, screen: ReviewScreen) -> None:
        self.screen = screen
        self.session: ReviewSession = screen.session

    @property
    def ledger(self) -> EvidenceLedger:
        """The review's evidence ledger."""
        return self.session.evidence

    def check_action(self, action: str) -> bool | None:
        """Whether `action` may run now: True yes, False hidden, None shown disabled.

        The screen asks every part; a part answers True for actions it does not own.
        """
        return True

    def close(self) -> None:
        """Release what the part holds (the screen is going away)."""

    def thread(self, work: Callable[[], None], group: str, name: str) -> Worker[None]:
        """Run `work` in an exclusive thread worker of `group` (the screen's worker, so messages reach it)."""
        return self.screen.run_worker(work, name=name, group=group, thread=True, exclusive=True, exit_on_error=False)
