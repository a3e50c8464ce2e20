"""Verdicts as the review session records and reads them (a part of ReviewSession).

Recording one with the ledger's evidence, the branch's history weighed by
the verdict relation (core/notes/relation.py), the log, notes sync.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reviewui.core.config import Settings
    from reviewui.core.evidence import EvidenceLedger, HistoryRow, HistoryView, VerdictEvidence
    from reviewui.core.notes.model import Review
    from reviewui.core.notes.preflight import SetupProblem
    from reviewui.core.notes.relation import WeighedReview
    from reviewui.core.target import Target


class SessionVerdicts:
    """ReviewSession's verdict methods (mixed into it; the fields are the session's)."""

    target: "Target"
    settings: "Settings"

    if TYPE_CHECKING:
        @property
        def evidence(self) -> EvidenceLedger:
            """The session's one ledger (ReviewSession.evidence)."""

    # --- without a branch under review ------------------------------------

    @staticmethod
    def sync_notes(repo: str | Path | None, action: str, remote: str) -> tuple[str, list[str]]:
        """`pull` (fetch, merge by review id) or `push` the verdict notes of `repo`.

        Returns one line saying what happened and the warning lines (a note
        skipped for its size: the rest of the pull went on).
        """
        from reviewui.core.config import notes_ref_for
        from reviewui.core.git import open_repo
        from reviewui.core.notes.sync import pull_notes_report, push_notes

        root = Path(open_repo(repo or Path.cwd()).working_tree_dir or ".")
        ref = notes_ref_for(root)  # trusted config only: never the checked-out branch
        if action == "pull":
            report = pull_notes_report(root, remote, ref)
            return report.words(remote), report.warnings()
        push_notes(root, remote, ref)
        return f"pushed {ref} to {remote}", []

    # --- verdicts ----------------------------------------------------------

    def verdict_setup_problems(self) -> "list[SetupProblem]":
        """What stops a verdict from being recorded now (no git identity, a signing setup that cannot sign).

        Empty when nothing does; each problem carries the `git config` line that fixes it.
        """
        from reviewui.core.notes.preflight import verdict_setup_problems

        return verdict_setup_problems(self.target.repo_dir)

    def verdict(self, verdict: str, reason: str, evidence: VerdictEvidence | None = None) -> "Review":
        """Record `verdict` on the branch head in git notes with the ledger's evidence; return the review.

        `evidence` is the ledger's verdict evidence taken earlier (the UI takes
        it on its own thread when the reviewer confirms); None takes it now.

        Raises ReviewError for an unknown verdict, a reject without a reason,
        no git identity, or a note that cannot be written.
        """
        from reviewui.core.notes.model import Review
        from reviewui.core.notes.verdicts import record_review

        t = self.target
        ev = evidence if evidence is not None else self.evidence.verdict_evidence()
        review = Review.new(
            verdict, reason, repo_dir=t.repo_dir, branch=t.branch, base=t.base, head=t.head,
            bites=ev.bites, probes=ev.probes, comments=ev.comments, findings=ev.findings, tests=ev.tests,
        )
        record_review(t.repo_dir, review, self.settings.notes_ref)
        return review

    def history(self) -> "list[HistoryRow]":
        """Earlier verdicts of this branch, oldest first: (review shown as whom, relation, signature words).

        The relation to the head now is `this-head`, `same-patch` or
        `different-patch`; the reviewer field says whom the review is shown
        as, so a forged claim to be the local reviewer never reads as theirs;
        the signature words say where a pulled review came from, and that one
        does not count (the verdict relation, core/notes/relation.py).
        """
        return list(self.history_view().rows)

    def history_view(self) -> "HistoryView":
        """The branch's verdicts weighed by the verdict relation: every review, those that count, the
        verdict now, the notes' foreign text, and a warning when the reviewer is the head's author."""
        from dataclasses import replace

        from reviewui.core.evidence import HistoryView
        from reviewui.core.notes.trust import local_reviewer, self_review
        from reviewui.core.notes.verdicts import RELATION_WORDS, read_branch_notes

        t = self.target
        notes = read_branch_notes(t.repo_dir, t.branch, t.base, t.head, self.settings.notes_ref)
        mine = self_review(t.repo_dir, t.head, local_reviewer(t.repo_dir))

        def row(w: "WeighedReview") -> "HistoryRow":
            words = w.signature_words() + ("" if w.counts else f" · does not count ({w.why_not})")
            return replace(w.review, reviewer=w.shown_as), RELATION_WORDS[w.currency], words

        rows = {w.review.id: row(w) for w in notes.reviews}
        decided = notes.verdict
        return HistoryView(tuple(rows.values()), tuple(rows[w.review.id] for w in notes.reviews if w.counts),
                           rows[decided.review.id] if decided else None, notes.foreign, mine)

    def self_review_warning(self) -> str:
        """One line when the reviewer's git identity is the head commit's author, else ""."""
        from reviewui.core.notes.trust import local_reviewer, self_review

        return self_review(self.target.repo_dir, self.target.head, local_reviewer(self.target.repo_dir))

    def log_json(self) -> dict[str, Any]:
        """The verdict log as the contract JSON document."""
        from reviewui.core.notes.verdicts import log_json

        t = self.target
        return log_json(t.repo_dir, t.branch, t.base, t.head, self.settings.notes_ref)

    def log_text(self) -> str:
        """The verdict log as text."""
        from reviewui.core.notes.verdicts import render_log_text

        t = self.target
        return render_log_text(t.repo_dir, t.branch, t.base, t.head, self.settings.notes_ref)
