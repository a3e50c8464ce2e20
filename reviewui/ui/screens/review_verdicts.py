"""The review screen's verdict side: reviewed marks, hunk comments, approve/reject, history.

A mixin of ReviewScreen (a Screen subclass so its BINDINGS merge). Marks and
comments live in the reviewer's local state file; verdicts go to git notes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.screen import Screen

from reviewui.core.diff import Hunk
from reviewui.core.errors import ReviewError
from reviewui.core.state import ReviewState
from reviewui.ui.screens.text_prompt import TextPromptModal
from reviewui.ui.screens.verdict import VerdictDraft, VerdictModal

if TYPE_CHECKING:
    from reviewui.core.notes.verdicts import Review
    from reviewui.core.session import ReviewSession
    from reviewui.ui.widgets.diff_view import DiffView


class VerdictActions(Screen[None]):
    """Marks, comments, verdicts and their history."""

    BINDINGS = [
        Binding("space", "toggle_reviewed", "Reviewed", tooltip="Mark the hunk under the cursor as reviewed"),
        Binding("c", "comment", "Comment", tooltip="Comment on the hunk (or line) under the cursor"),
        Binding("a", "verdict('approve')", "Approve", tooltip="Approve, with the evidence attached"),
        Binding("x", "verdict('reject')", "Reject", tooltip="Reject with a reason, evidence attached"),
        Binding("v", "history", "History", tooltip="Verdicts recorded for this branch"),
    ]

    session: "ReviewSession"
    state: ReviewState
    diff_view: "DiffView"

    def load_state(self) -> None:
        """Read the reviewer's marks and comments for this branch."""
        t = self.session.target
        self.state = ReviewState.load(t.repo_dir, t.branch)
        if self.state.problem:
            self.notify(self.state.problem, severity="warning")

    def all_hunks(self) -> list[Hunk]:
        """Every hunk of the branch (parses every file: call after DiffLoaded or in a worker)."""
        return [h for f in self.session.diff.files for h in f.hunks]

    def refresh_progress(self) -> None:
        """Recount reviewed hunks for the header (needs every file parsed)."""
        from reviewui.ui.widgets.review_header import ReviewHeader

        done, total = self.state.progress(self.all_hunks())
        self.query_one(ReviewHeader).progress = (done, total)

    def is_reviewed(self, h: Hunk) -> bool:
        """True when the reviewer marked this hunk and it has not changed since."""
        return self.state.is_marked(h.file, h.header, h.text)

    def action_toggle_reviewed(self) -> None:
        h = self.diff_view.current_hunk
        if h is None:
            self.notify("No hunk under the cursor", severity="warning")
            return
        if self.is_reviewed(h):
            self.state.unmark(h.file, h.header)
        else:
            self.state.mark(h.file, h.header, h.text)
        self._save_state()
        self.evidence_changed(h.file)
        self.refresh_progress()

    def action_comment(self) -> None:
        h = self.diff_view.current_hunk
        if h is None:
            self.notify("No hunk under the cursor", severity="warning")
            return
        line = self.diff_view.current_line
        where = f"{h.file} {h.header}" + (f" line {line}" if line else "")

        existing = next((c for c in self.state.comments(h.file) if c.header == h.header and c.line == line), None)
        if existing is None and line is not None:
            existing = next((c for c in self.state.comments(h.file) if c.header == h.header and c.line is None), None)

        def done(text: str | None) -> None:
            if text is None:
                return
            if existing is not None:
                # c on a commented hunk edits that comment; an emptied one is deleted
                self.state.remove_comment(existing.id)
                if text:
                    self.state.add_comment(h.file, h.header, text, existing.line)
            elif text:
                self.state.add_comment(h.file, h.header, text, line)
            self._save_state()
            self.evidence_changed(h.file)
            said = "added" if existing is None else ("changed" if text else "deleted")
            self.notify(f"Comment {said} on {where}")

        if existing is None:
            prompt = TextPromptModal(f"Comment on {where}", "What should the author know?")
        else:
            prompt = TextPromptModal(f"Edit the comment on {where} (empty it and press enter to delete it)",
                                     "What should the author know?", value=existing.text, allow_empty=True)
        self.app.push_screen(prompt, done)

    def _save_state(self) -> None:
        try:
            self.state.save()
        except ReviewError as e:
            self.notify(str(e), severity="error")

    def verdict_draft(self, verdict: str) -> VerdictDraft:
        """The evidence a verdict would record now, as lines for the modal."""
        bites = [f"{r.file} {r.header}: {r.verdict}" for r in self.bite_results()]
        from reviewui.core.probe.run import outcome_words

        probes = [f"{p.name}: {outcome_words(p.outcomes)}" for p in self.state.probes()]
        findings = [f"{f.severity} {f.kind}: {f.message}" for f in self.current_findings()]
        comments = [f"{c.file} {c.header}: {c.text}" for c in self.state.comments()]
        return VerdictDraft(verdict, bites, probes, findings, comments, against=self._against(verdict))

    def _against(self, verdict: str) -> list[str]:
        """What stands against `verdict` now, in plain words (empty: nothing does)."""
        from reviewui.core.probe.run import outcome_words

        if verdict != "approve":
            return []
        out = [f"kept probe {p.name} {outcome_words(p.outcomes)}" for p in self.state.probes()
               if p.outcomes.get("branch") in ("failed", "error", "timeout")]
        out += [f"{r.file} {r.header} is {r.verdict}: no test notices it reverted" for r in self.bite_results()
                if r.verdict in ("toothless", "uncovered")]
        out += [f"error finding {f.kind}: {f.message}" for f in self.current_findings() if f.severity == "error"]
        out += [f"an earlier {r.verdict} by {r.reviewer.split(' <')[0]} ({rel.replace('-', ' ')})"
                for r, rel, _ in self.history_rows() if r.verdict == "reject"]
        return out

    def action_verdict(self, verdict: str) -> None:
        def done(reason: str | None) -> None:
            if reason is None:
                return
            try:
                self._record(verdict, reason)
            except ReviewError as e:
                self.notify(str(e), severity="error")

        self.app.push_screen(VerdictModal(self.verdict_draft(verdict)), done)

    def _record(self, verdict: str, reason: str) -> None:
        # the notes modules (and signing) load when a verdict is recorded, not before the first paint
        from reviewui.core.notes.verdicts import BiteRecord, FindingRecord, Review, record_review

        t = self.session.target
        review = Review.new(
            verdict, reason, repo_dir=t.repo_dir, branch=t.branch, base=t.base, head=t.head,
            bites=tuple(BiteRecord(r.file, r.header, r.verdict, tuple(r.failing_tests)) for r in self.bite_results()),
            probes=self.state.probe_records(),
            comments=self.state.comment_records(),
            findings=tuple(FindingRecord(f.kind, f.message) for f in self.current_findings()),
        )
        record_review(t.repo_dir, review, self.session.settings.notes_ref)
        self.show_last_verdict()
        self.notify(f"Recorded {verdict} on {t.head[:7]} in {self.session.settings.notes_ref}")

    def history_rows(self) -> list[tuple[Review, str, str]]:
        """Earlier verdicts of this branch: (review shown as whom, relation to the head now, signature words)."""
        from dataclasses import replace

        from reviewui.core.notes.patchid import patch_id
        from reviewui.core.notes.trust import local_reviewer, shown_reviewer
        from reviewui.core.notes.verdicts import checked_history, review_relation

        t = self.session.target
        checked = checked_history(t.repo_dir, t.branch, t.head, self.session.settings.notes_ref)
        if not checked:
            return []
        current = patch_id(t.repo_dir, t.base, t.head)
        me = local_reviewer(t.repo_dir)
        # the reviewer field is replaced by whom it is shown as: a forged claim to be `me` never reads as mine
        return [(replace(r, reviewer=shown_reviewer(r, c, me)), review_relation(r, t.head, current), c.words())
                for r, c in checked]

    def show_last_verdict(self) -> None:
        """Put the latest verdict (and whether it still applies) in the header."""
        from reviewui.ui.widgets.review_header import ReviewHeader

        rows = self.history_rows()
        header = self.query_one(ReviewHeader)
        if not rows:
            header.verdict = ""
            return
        review, relation, _signed = rows[-1]
        note = {"this-head": "", "same-patch": " (earlier head, same patch)",
                "different-patch": " (earlier head, changed since)"}.get(relation, "")
        done = {"approve": "approved", "reject": "rejected"}.get(review.verdict, review.verdict)
        who = "an unverified claim to be you" if review.reviewer.startswith("unverified") else review.reviewer.split(" <")[0]
        header.verdict = f"{done} by {who}{note}"

    def action_history(self) -> None:
        from reviewui.ui.screens.history import HistoryScreen

        self.app.push_screen(HistoryScreen(self.history_rows()))

    if TYPE_CHECKING:  # provided by the other halves of ReviewScreen
        def bite_results(self) -> list[Any]: ...
        def current_findings(self) -> list[Any]: ...
        def evidence_changed(self, path: str) -> None: ...
