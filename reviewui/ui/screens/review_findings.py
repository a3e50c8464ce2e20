"""The review screen's findings part: computed in a worker when the review opens, `F` lists them.

Findings need the fixtures analysis and the transcript, so they arrive
after the first paint; badges fill in then. A finished bite run computes
them again with its report (toothless-hunk, baseline-red).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding

from reviewui.core.errors import ReviewError
from reviewui.ui.messages import FindingsReady, WorkFailed
from reviewui.core.safe_text import visible
from reviewui.ui.screens.review_part import ReviewPart
from reviewui.ui.widgets.file_list import FileList

if TYPE_CHECKING:
    from reviewui.core.bite.report import BiteReport


class FindingsPart(ReviewPart):
    """The findings worker and list."""

    BINDINGS = [Binding("F", "findings", "Findings", id="review.findings",
                        tooltip="Findings, error first; enter jumps to one")]

    def compute(self, bite_report: BiteReport | None = None) -> None:
        """Compute the findings off the UI thread (with bite findings when a report is given, and
        the truth table's once the ledger has one)."""
        table = self.ledger.truth_table  # read here, on the UI thread: workers never touch the ledger

        def work() -> None:
            try:
                self.session.diff.preload()
                found = (self.session.findings(bite_report) if table is None
                         else self.session.findings(bite_report, tests_table=table))
            except ReviewError as e:
                self.screen.post_message(WorkFailed("findings", str(e)))
                return
            self.screen.post_message(FindingsReady(found))

        self.thread(work, group="findings", name="findings")

    def on_ready(self, message: FindingsReady) -> None:
        """Findings arrived: into the ledger and onto the files they name."""
        before = [f.file for f in self.ledger.findings if f.file]
        self.ledger.set_findings(message.findings)
        self.host.transcript_part.set_claims(message.findings)  # claims flag their turns in the pane
        for path in dict.fromkeys([*before, *(f.file for f in message.findings if f.file)]):
            self.host.evidence_changed(path)
        errors = sum(1 for f in message.findings if f.severity == "error")
        if errors:
            self.screen.notify(f"{errors} error finding{'s' if errors > 1 else ''}: press F", severity="warning")

    def show(self) -> None:
        """Open the findings list; enter on one jumps to it."""
        from reviewui.ui.screens.findings import TRUST_BRANCH_CONFIG, TURN, FindingsScreen  # not on the first screen

        def jump(where: tuple[str, int | None] | str | None) -> None:
            if where == TRUST_BRANCH_CONFIG:
                self.trust_branch_config()
            elif isinstance(where, tuple) and where[0] == TURN and where[1] is not None:
                self.screen.call_later(self.host.transcript_part.show_turn, where[1])
            elif where is not None and not isinstance(where, str):
                self.host.navigation.jump_to(*where)

        can_trust = not self.session.settings.branch_config_trusted
        self.screen.app.push_screen(
            FindingsScreen(self.ledger.findings, computing=not self.ledger.findings_ready, can_trust=can_trust), jump
        )

    def trust_branch_config(self) -> None:
        """Accept the branch's own config changes for this review (the twin of --trust-branch-config)."""
        try:
            self.session.accept_branch_config()
        except ReviewError as e:
            self.screen.notify(visible(str(e)), severity="error", markup=False)
            return
        # New test globs may have moved files between Tests and Source.
        self.screen.query_one("#files", FileList).rebuild()
        keys = ", ".join(self.session.branch_config().keys)
        self.screen.notify(visible(f"Branch config accepted for this review: {keys}"), severity="warning", markup=False)
        self.ledger.findings_ready = False
        self.compute()
