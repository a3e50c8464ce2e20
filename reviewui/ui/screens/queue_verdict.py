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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reviewui.core.evidence import VerdictEvidence
    from reviewui.core.notes.preflight import SetupProblem
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
