"""VerdictModal: what will be recorded, a reason, and enter to record it.

The reviewer sees the evidence that goes into the note (bite results so
far, kept probes, findings, hunk comments) before it is written. A reject
needs a reason; an approve may go without.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from reviewui.core.safe_text import visible


@dataclass(frozen=True)
class VerdictDraft:
    """The evidence shown in the modal (plain lines per section)."""

    verdict: str
    bites: list[str]
    probes: list[str]
    findings: list[str]
    comments: list[str]
    against: list[str] = field(default_factory=list)
    """What stands against the verdict, one plain line each (see EvidenceLedger.against)."""


class VerdictModal(ModalScreen[str | None]):
    """Confirm a verdict; dismisses with the reason ("" allowed for approve) or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    DEFAULT_CSS = """
    VerdictModal { align: center middle; }
    VerdictModal > Vertical {
        width: 100; max-width: 95%; height: 80%; padding: 1 2;
        background: $panel; border: round $accent;
    }
    VerdictModal #evidence { height: 1fr; margin-bottom: 1; }
    VerdictModal #verdict-error { color: $error; height: auto; }
    VerdictModal.reject > Vertical { border: round $error; }
    VerdictModal.approve > Vertical { border: round $success; }
    """

    def __init__(self, draft: VerdictDraft) -> None:
        super().__init__(classes=draft.verdict)
        self.draft = draft

    def compose(self) -> ComposeResult:
        d = self.draft
        title = "Approve" if d.verdict == "approve" else "Reject"
        lines: list[Content] = []
        if d.against:
            lines.append(Content.assemble((f"Stands against this {d.verdict} ({len(d.against)}):", "bold $error")))
            lines.extend(Content.assemble(("  ✗ ", "$error"), visible(item)) for item in d.against)
        else:
            lines.append(Content.assemble(("Nothing stands against this verdict.", "$success")))
        lines.append(Content(""))
        lines.append(Content.assemble((f"{title} this branch — recorded in git notes with:", "bold")))
        for name, items in (
            ("Bite-checks", d.bites), ("Kept probes", d.probes),
            ("Findings", d.findings), ("Comments", d.comments),
        ):
            lines.append(Content.assemble(("\n" + name + f" ({len(items)})", "bold $accent")))
            lines.extend(Content("  " + visible(item)) for item in items) if items else lines.append(
                Content.assemble(("  none", "$text-muted"))
            )
        with Vertical():
            with VerticalScroll(id="evidence"):
                yield Static(Content("\n").join(lines), id="evidence-text")
            yield Static("", id="verdict-error")
            placeholder = "Reason (required)" if d.verdict == "reject" else "Reason (optional)"
            yield Input(placeholder=placeholder, id="reason")

    def on_mount(self) -> None:
        self.query_one("#reason", Input).focus()

    @on(Input.Submitted, "#reason")
    def _submitted(self, event: Input.Submitted) -> None:
        reason = event.value.strip()
        if self.draft.verdict == "reject" and not reason:
            self.query_one("#verdict-error", Static).update("A reject needs a reason: say what is wrong.")
            return
        self.dismiss(reason)

    def action_cancel(self) -> None:
        self.dismiss(None)
