"""The review screen's verdict part: reviewed marks, hunk comments, approve/reject, history.

Marks and comments live in the reviewer's local state file (held by the
ledger); verdicts go to git notes through the session, in a worker, as
does reading the history (git calls never run on the UI thread).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.screen import Screen

from reviewui.core.hunks import Hunk
from reviewui.core.errors import ReviewError
from reviewui.ui.evidence_view import verdict_draft
from reviewui.ui.messages import HistoryRead, VerdictRecorded, VerdictSetupChecked, WorkFailed
from reviewui.ui.screens.review_part import ReviewHost, ReviewPart
from reviewui.ui.widgets.review_header import ReviewHeader
from reviewui.core.safe_text import visible

if TYPE_CHECKING:
    from reviewui.core.evidence import HistoryRow, VerdictEvidence
    from reviewui.core.notes.model import Review
    from reviewui.ui.screens.verdict import VerdictModal

RELATION_NOTE = {"this-head": "", "same-patch": " (earlier head, same patch)",
                 "different-patch": " (outdated by rework)"}
DONE = {"approve": "approved", "reject": "rejected"}


class VerdictsPart(ReviewPart):
    """Marks, comments, verdicts and their history."""

    BINDINGS = [
        Binding("space", "toggle_reviewed", "Reviewed", id="review.reviewed",
                tooltip="Mark the hunk under the cursor as reviewed"),
        Binding("c", "comment", "Comment", id="review.comment",
                tooltip="Comment on the hunk (or line) under the cursor"),
        Binding("a", "verdict('approve')", "Approve", id="review.approve",
                tooltip="Approve, with the evidence attached"),
        Binding("x", "verdict('reject')", "Reject", id="review.reject",
                tooltip="Reject with a reason, evidence attached"),
        Binding("v", "history", "History", id="review.history", tooltip="Verdicts recorded for this branch"),
    ]

    def __init__(self, screen: Screen[None], host: ReviewHost) -> None:
        super().__init__(screen, host)
        self.history_rows: list[HistoryRow] = []
        """The branch's verdicts that count (verdict relation), as last read: an earlier reject stands
        against an approve."""
        self.self_review = ""
        """Said before a verdict is recorded when the reviewer is the head commit's author (else "")."""
        self.drafts: dict[str, str] = {}
        """Verdict -> the reason typed and not yet recorded (offered again when the dialog reopens)."""
        self.failures: dict[str, str] = {}
        """Verdict -> why its last recording failed (shown beside the kept draft)."""
        self._modal: VerdictModal | None = None
        """The verdict dialog while it is open (the setup check's answer goes to it)."""

    def load_state(self) -> None:
        """Read the reviewer's marks and comments for this branch (into the ledger) and say if that failed."""
        state = self.ledger.state
        if state.problem:
            self.screen.notify(visible(state.problem), severity="warning", markup=False)

    def all_hunks(self) -> list[Hunk]:
        """Every hunk of the branch (parses every file: call after DiffLoaded or in a worker)."""
        return [h for f in self.session.diff.files for h in f.hunks]

    def refresh_progress(self) -> None:
        """Recount reviewed hunks for the header (needs every file parsed)."""
        done, total = self.ledger.state.progress(self.all_hunks())
        self.screen.query_one(ReviewHeader).progress = (done, total)

    def toggle_reviewed(self) -> None:
        """Mark (or unmark) the hunk under the cursor as reviewed."""
        h = self.host.diff_view.current_hunk
        if h is None:
            self.screen.notify("No hunk under the cursor", severity="warning")
            return
        state = self.ledger.state
        if self.ledger.is_reviewed(h):
            state.unmark(h.file, h.header)
        else:
            state.mark(h.file, h.header, h.text)
        self._save_state()
        self.host.evidence_changed(h.file)
        self.refresh_progress()

    def comment(self) -> None:
        """Ask for a comment on the hunk (or line) under the cursor."""
        h = self.host.diff_view.current_hunk
        if h is None:
            self.screen.notify("No hunk under the cursor", severity="warning")
            return
        line = self.host.diff_view.current_line
        where = f"{h.file} {h.header}" + (f" line {line}" if line else "")

        # The comment of exactly this place: a line's own, or the hunk's on its header row. A hunk's
        # comment is not offered from its lines, or a hunk with one could never get a line comment.
        existing = next((c for c in self.ledger.state.comments(h.file) if c.header == h.header and c.line == line), None)

        def done(text: str | None) -> None:
            if text is None:
                return
            if existing is not None:
                # c on a commented hunk edits that comment; an emptied one is deleted
                self.ledger.state.remove_comment(existing.id)
                if text:
                    self.ledger.state.add_comment(h.file, h.header, text, existing.line)
            elif text:
                self.ledger.state.add_comment(h.file, h.header, text, line)
            self._save_state()
            self.host.evidence_changed(h.file)
            said = "added" if existing is None else ("changed" if text else "deleted")
            self.screen.notify(f"Comment {said} on {visible(where)}", markup=False)

        from reviewui.ui.screens.text_prompt import TextPromptModal  # not at the top: not on the first screen

        if existing is None:
            prompt = TextPromptModal(f"Comment on {where}", "What should the author know?")
        else:
            on = f"{h.file} {h.header}" + (f" line {existing.line}" if existing.line else "")
            prompt = TextPromptModal(f"Edit the comment on {on} (empty it and press enter to delete it)",
                                     "What should the author know?", value=existing.text, allow_empty=True)
        self.screen.app.push_screen(prompt, done)

    def _save_state(self) -> None:
        try:
            self.ledger.state.save()
        except ReviewError as e:
            self.screen.notify(visible(str(e)), severity="error", markup=False)

    def verdict(self, verdict: str) -> None:
        """Show what a verdict would record (and whether git can record it); record it when confirmed."""
        from reviewui.ui.screens.verdict import VerdictAnswer, VerdictModal  # not at the top: not on the first screen

        hunks = self.all_hunks() if self.host.startup.diff_loaded else None
        draft = verdict_draft(verdict, self.ledger, self.history_rows, hunks,
                              reason=self.drafts.get(verdict, ""), kept_because=self.failures.get(verdict, ""),
                              warnings=(self.self_review,) if self.self_review else ())
        modal = VerdictModal(draft, recheck=self.check_setup)

        def done(answer: VerdictAnswer | None) -> None:
            self._modal = None
            if answer is None:
                return
            if answer.reason:
                self.drafts[verdict] = answer.reason  # until it is recorded: a failure must not lose it
            else:
                self.drafts.pop(verdict, None)
            if answer.record:
                # The evidence is what the modal showed, taken on the UI thread, not what
                # arrives while the worker writes the note.
                self.record(verdict, answer.reason, self.ledger.verdict_evidence())

        self._modal = modal
        self.screen.app.push_screen(modal, done)
        self.check_setup()

    def check_setup(self) -> None:
        """Ask git, in a worker, whether a verdict can be recorded here; VerdictSetupChecked reports."""

        def work() -> None:
            try:
                problems = self.session.verdict_setup_problems()
            except ReviewError as e:
                from reviewui.core.notes.preflight import SetupProblem

                problems = [SetupProblem(str(e), "git config --list --show-origin")]
            self.screen.post_message(VerdictSetupChecked(problems))

        self.thread(work, group="verdict-setup", name="verdict setup check")

    def on_setup_checked(self, message: VerdictSetupChecked) -> None:
        """The git setup check came back: the open dialog shows it."""
        if self._modal is not None:
            self._modal.setup = tuple(message.problems)

    def record(self, verdict: str, reason: str, evidence: VerdictEvidence) -> None:
        """Write the verdict to git notes in a worker; VerdictRecorded reports back."""

        def work() -> None:
            try:
                review = self.session.verdict(verdict, reason, evidence)
            except ReviewError as e:
                self.screen.post_message(VerdictRecorded(None, str(e), verdict))
                return
            self.screen.post_message(VerdictRecorded(review, verdict=verdict))

        self.failures.pop(verdict, None)
        self.thread(work, group="verdict", name="verdict")

    def on_recorded(self, message: VerdictRecorded) -> None:
        """The note was written (or not): say so, and show it in the header; a failure keeps the draft."""
        review = message.review
        if review is None:
            error = message.error or "verdict not recorded"
            if message.verdict:
                self.failures[message.verdict] = error
                key = "a" if message.verdict == "approve" else "x"
                error += f" — your reason is kept: {key} offers it again"
            self.screen.notify(visible(error), severity="error", markup=False, timeout=10)
            return
        self.drafts.pop(review.verdict, None)
        self.failures.pop(review.verdict, None)
        self.show_in_header(review, "this-head")
        self.history_rows = [*self.history_rows, (review, "this-head", "")]  # until the history is read again
        self.read_history(show=False)
        ref = self.session.settings.notes_ref
        self.screen.notify(f"Recorded {review.verdict} on {review.head[:7]} in {ref}")

    def read_history(self, show: bool) -> None:
        """Read the verdict history in a worker: for the header, and for the screen when `show`."""

        def work() -> None:
            try:
                view = self.session.history_view()
            except ReviewError as e:
                self.screen.post_message(WorkFailed("history", str(e)))
                return
            self.screen.post_message(HistoryRead(view, show))

        self.thread(work, group="history", name="verdict history")

    def on_history(self, message: HistoryRead) -> None:
        """The history arrived: the verdict now (verdict relation) to the header; the list on screen when
        asked for."""
        view = message.view
        self.history_rows = list(view.counted)
        self.self_review = view.self_review
        if view.verdict is not None:
            review, relation, _signed = view.verdict
            self.show_in_header(review, relation)
        else:
            self.screen.query_one(ReviewHeader).verdict = ""
        if message.show:
            from reviewui.ui.screens.history import HistoryScreen  # its notes model: not before the first screen

            self.screen.app.push_screen(HistoryScreen(view.rows, view.foreign))

    def show_in_header(self, review: Review, relation: str) -> None:
        """Put a verdict (and whether it still applies) in the header."""
        done = DONE.get(review.verdict, review.verdict)
        note = RELATION_NOTE.get(relation, "")
        unverified = review.reviewer.startswith("unverified")
        who = "an unverified claim to be you" if unverified else review.reviewer.split(" <")[0]
        self.screen.query_one(ReviewHeader).verdict = visible(f"{done} by {who}{note}")
