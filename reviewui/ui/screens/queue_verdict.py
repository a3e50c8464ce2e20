"""A verdict from a queue row: the review's own dialog, asking the same questions.

`a`/`x` on a row opens the branch's session in a worker, adds its current
stored evidence to the ledger, computes its findings and reads its verdicts
through the verdict relation, then shows the same VerdictModal the review
screen shows, with the same draft (`verdict_draft`): an approve with
something standing against it (a toothless hunk, an error finding, a
verdict on one's own work) is recorded only with ctrl+y, never by enter.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from reviewui.core.errors import ReviewError
from reviewui.core.safe_text import visible

if TYPE_CHECKING:
    from reviewui.core.evidence import VerdictEvidence
    from textual.screen import Screen

    from reviewui.core.notes.preflight import SetupProblem
    from reviewui.core.queue.read import QueueSource
    from reviewui.core.session import ReviewSession
    from reviewui.ui.screens.verdict import VerdictDraft


@dataclass(frozen=True)
class RowVerdict:
    """What the dialog for a row's verdict shows, and what recording it writes."""

    session: ReviewSession
    """The branch's own session (used by this one flow only)."""
    draft: VerdictDraft
    """The dialog's lines: the review screen's draft for the same evidence."""
    evidence: VerdictEvidence
    """What the verdict carries: the ledger's, taken as the dialog opened."""
    setup: tuple[SetupProblem, ...]
    """What stops git from recording a verdict here."""


def prepare(repo: Path, branch: str, base: str, verdict: str) -> RowVerdict:
    """The dialog of `verdict` on `branch` as the review screen would show it (git work: call from a worker).

    Raises ReviewError when the branch cannot be opened.
    """
    from reviewui.core.session import ReviewSession
    from reviewui.ui.evidence_view import verdict_draft

    session = ReviewSession.open(repo, branch, base)
    session.evidence.add_stored(session.stored())
    session.collect_findings()
    view = session.history_view()
    draft = verdict_draft(verdict, session.evidence, view.counted,
                          warnings=(view.self_review,) if view.self_review else ())
    return RowVerdict(session, draft, session.evidence.verdict_evidence(), tuple(session.verdict_setup_problems()))


class RowVerdictFlow:
    """One row's verdict: drafted in a worker, asked in the review's dialog, recorded in a worker."""

    def __init__(self, screen: Screen[Any], source: QueueSource, reread: Callable[[], None]) -> None:
        self.screen = screen
        self.source = source
        self.reread = reread
        """Reads the queue again (after a verdict is recorded, or not)."""

    def start(self, branch: str, verdict: str) -> None:
        """Open `branch`, draft `verdict` as the review would, and ask (the queue is read again after)."""
        self.screen.run_worker(lambda: self._prepare(branch, verdict), thread=True, exclusive=True,
                               group="queue-verdict", exit_on_error=False)

    def _prepare(self, branch: str, verdict: str) -> None:
        app, source = self.screen.app, self.source
        try:
            ask = prepare(source.repo, branch, source.base, verdict)
        except ReviewError as e:
            app.call_from_thread(self.screen.notify, visible(str(e)), severity="error", markup=False)
            return
        app.call_from_thread(self._ask, ask, verdict)

    def _ask(self, ask: RowVerdict, verdict: str) -> None:
        from reviewui.ui.screens.verdict import VerdictAnswer, VerdictModal

        modal = VerdictModal(ask.draft)
        modal.setup = ask.setup

        def done(answer: VerdictAnswer | None) -> None:
            if answer is not None and answer.record:
                self.screen.run_worker(lambda: self._record(ask, verdict, answer.reason), thread=True,
                                       exclusive=True, group="queue-verdict", exit_on_error=False)

        self.screen.app.push_screen(modal, done)

    def _record(self, ask: RowVerdict, verdict: str, reason: str) -> None:
        """Record the verdict with the evidence the dialog showed, then read the queue again."""
        try:
            ask.session.verdict(verdict, reason, ask.evidence)
        except ReviewError as e:
            self.screen.app.call_from_thread(self.screen.notify, visible(str(e)), severity="error", markup=False)
        self.screen.app.call_from_thread(self.reread)
