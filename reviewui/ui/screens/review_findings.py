"""The review screen's findings side: computed in a worker when the review opens, `F` lists them.

A mixin of ReviewScreen. Findings need the fixtures analysis and the
transcript, so they arrive after the first paint; badges fill in then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.binding import Binding
from textual.screen import Screen

from reviewui.core.safe_text import visible
from reviewui.ui.messages import FindingsReady, WorkFailed
from reviewui.ui.screens.findings import TRUST_BRANCH_CONFIG, FindingsScreen

if TYPE_CHECKING:
    from reviewui.core.session import ReviewSession


class FindingsActions(Screen[None]):
    """The findings worker and panel."""

    BINDINGS = [Binding("F", "findings", "Findings", tooltip="Findings, error first; enter jumps to one")]

    session: "ReviewSession"
    findings: list[Any]
    findings_ready: bool = False

    @work(thread=True, exclusive=True, group="findings", exit_on_error=False)
    def compute_findings(self, bite_report: Any = None) -> None:
        """Compute the findings off the UI thread (with bite findings when a report is given)."""
        from reviewui.core.errors import ReviewError

        try:
            self.session.diff.preload()
            found = self.session.findings(bite_report)
        except ReviewError as e:
            self.post_message(WorkFailed("findings", str(e)))
            return
        self.post_message(FindingsReady(found))

    @on(FindingsReady)
    def _findings_ready(self, message: FindingsReady) -> None:
        self.findings = message.findings
        self.findings_ready = True
        paths = {f.file for f in self.findings if f.file}
        for path in paths:
            self.evidence_changed(path)
        errors = sum(1 for f in self.findings if f.severity == "error")
        if errors:
            self.notify(f"{errors} error finding{'s' if errors > 1 else ''}: press F", severity="warning")

    @on(WorkFailed)
    def _work_failed(self, message: WorkFailed) -> None:
        self.notify(visible(f"{message.what}: {message.error}"), severity="error", markup=False)

    def action_findings(self) -> None:
        def jump(where: tuple[str, int | None] | str | None) -> None:
            if where == TRUST_BRANCH_CONFIG:
                self.trust_branch_config()
                return
            if where is None or isinstance(where, str):
                return
            path, line = where
            self.jump_to(path, line)

        can_trust = not self.session.settings.branch_config_trusted
        self.app.push_screen(FindingsScreen(self.findings, computing=not self.findings_ready, can_trust=can_trust), jump)

    def trust_branch_config(self) -> None:
        """Accept the branch's own config changes for this review (the twin of --trust-branch-config)."""
        from reviewui.core.errors import ReviewError

        try:
            self.session.accept_branch_config()
        except ReviewError as e:
            self.notify(visible(str(e)), severity="error", markup=False)
            return
        keys = ", ".join(self.session.branch_config().keys)
        self.notify(visible(f"Branch config accepted for this review: {keys}"), severity="warning", markup=False)
        self.findings_ready = False
        self.compute_findings()

    if TYPE_CHECKING:  # provided by the other halves of ReviewScreen
        def evidence_changed(self, path: str | None) -> None: ...
        def jump_to(self, path: str, line: int | None) -> None: ...
