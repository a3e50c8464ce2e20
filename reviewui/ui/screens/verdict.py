"""VerdictModal: what will be recorded, a reason, and a key to record it.

The reviewer sees the evidence that goes into the note (bite results so
far, kept probes, findings, hunk comments) before it is written, and
whether git can record it here at all (identity, signing setup: checked
as the dialog opens, with the `git config` line that fixes a problem). A
reject needs a reason; an approve may go without. An approve with things
standing against it is not recorded by enter: it lists them and needs
the confirm key. The reason typed is never lost: closing the dialog, or a
verdict that could not be written, keeps it as a draft the next dialog
offers again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from reviewui.core.safe_text import visible
from reviewui.ui.widgets.hanging import HangingLines, Row
from reviewui.ui.widgets.key_footer import ModalFooter

if TYPE_CHECKING:
    from reviewui.core.notes.preflight import SetupProblem

CONFIRM_KEY = "ctrl+y"
"""The key that approves although things stand against it (enter never does)."""


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
    reason: str = ""
    """The reason the reviewer typed last time (a draft kept), offered again."""
    kept_because: str = ""
    """Why there is a draft: the error that kept the last verdict from being recorded, or ""."""


@dataclass(frozen=True)
class VerdictAnswer:
    """How the dialog closed: the reason as typed, and whether to record the verdict."""

    reason: str
    record: bool
    """False: closed without recording (the reason is kept as a draft)."""


class VerdictModal(ModalScreen[VerdictAnswer]):
    """Confirm a verdict; dismisses with a VerdictAnswer (record or keep the draft)."""

    BINDINGS = [
        Binding("enter", "record", "Record", id="verdict.record",
                tooltip="Record the verdict (not while something stands against an approve: the confirm key "
                        "does that)"),
        Binding(CONFIRM_KEY, "approve_anyway", "Approve anyway", id="verdict.approve_anyway",
                tooltip="Approve although the things listed stand against it"),
        Binding("escape", "cancel", "Close, keep draft", id="verdict.close",
                tooltip="Close without recording; the reason is kept"),
    ]

    DEFAULT_CSS = """
    VerdictModal { align: center middle; }
    VerdictModal > Vertical {
        width: 100; max-width: 100%; height: 1fr; max-height: 90%; padding: 0 1;
        background: $panel; border: round $accent;
    }
    VerdictModal #setup { height: auto; }
    VerdictModal #evidence { height: 1fr; }
    VerdictModal #verdict-error { color: $error; height: auto; }
    VerdictModal #verdict-error.-empty { display: none; }
    VerdictModal.reject > Vertical { border: round $error; }
    VerdictModal.approve > Vertical { border: round $success; }
    """

    setup: reactive[tuple[SetupProblem, ...] | None] = reactive(None, bindings=True, always_update=True)
    """What stops git from recording a verdict here (None: still checking; empty: nothing).
    Every answer is drawn, the same as the last one too (a recheck that found the problem still there)."""

    def __init__(self, draft: VerdictDraft, recheck: Callable[[], None] | None = None) -> None:
        super().__init__(classes=draft.verdict)
        self.draft = draft
        self.recheck = recheck
        """Asks git again (its answer comes back as `setup`): enter after the reviewer ran a fix."""
        self._waiting: str | None = None
        """The action (`record`, `approve_anyway`) that runs when the recheck finds nothing in the way."""

    def compose(self) -> ComposeResult:
        d = self.draft
        with Vertical():
            yield Static(Content.styled("checking that git can record a verdict here…", "$text-muted"), id="setup")
            with VerticalScroll(id="evidence"):
                yield Static(HangingLines(self.evidence_lines()), id="evidence-text")
            kept = self._kept_line()
            yield Static(kept, id="verdict-error", classes="" if kept else "-empty")  # no row until it says something
            placeholder = "Reason (required)" if d.verdict == "reject" else "Reason (optional)"
            yield Input(d.reason, placeholder=placeholder, id="reason")
        yield ModalFooter()

    def evidence_lines(self) -> list[Row]:
        """What stands against the verdict, then what the note will carry, as rows (an item's
        bullet apart from its text, which wraps under itself)."""
        d = self.draft
        title = "Approve" if d.verdict == "approve" else "Reject"
        lines: list[Row] = []
        if d.against:
            lines.append(Content.assemble((f"Stands against this {d.verdict} ({len(d.against)}):", "bold $error")))
            lines.extend((Content.styled("  ✗ ", "$error"), Content(visible(item))) for item in d.against)
            if d.verdict == "approve":
                lines.append((Content("  "), Content.assemble(("enter does not approve this: ", "$error"),
                                                              (CONFIRM_KEY, "bold"), " approves anyway")))
        elif d.verdict == "approve":
            lines.append(Content.assemble(("Nothing stands against this approve.", "$success")))
        else:
            # A reject needs no evidence against the branch, and claims none: the reason says what is wrong.
            lines.append(Content.assemble(("Say in the reason what is wrong: it is what the author reads.",
                                           "$text-muted")))
        lines.append(Content(""))
        lines.append(Content.assemble((f"{title} this branch — recorded in git notes with:", "bold")))
        for name, items in (
            ("Bite-checks", d.bites), ("Kept probes", d.probes),
            ("Findings", d.findings), ("Comments", d.comments),
        ):
            lines.append(Content.assemble(("\n" + name + f" ({len(items)})", "bold $accent")))
            if items:
                lines.extend((Content("  "), Content(visible(item))) for item in items)
            else:
                lines.append(Content.assemble(("  none", "$text-muted")))
        return lines

    def _kept_line(self) -> Content:
        if not self.draft.kept_because:
            return Content("")
        return Content.assemble(("Your reason from last time is kept; the verdict was not recorded: ", "$warning"),
                                visible(self.draft.kept_because))

    def on_mount(self) -> None:
        reason = self.query_one("#reason", Input)
        reason.focus()
        reason.cursor_position = len(reason.value)
        self.watch_setup(self.setup)  # the check may have come back before the dialog was mounted

    def watch_setup(self, setup: tuple[SetupProblem, ...] | None) -> None:
        boxes = self.query("#setup").results(Static)
        box = next(boxes, None)
        if box is None or setup is None:
            return  # not composed yet: on_mount draws it
        if not setup:
            box.update(Content.styled("git can record this verdict here.", "$text-muted"))
        else:
            rows: list[Row] = [Content.styled("git cannot record a verdict here yet — fix this first, then press enter:",
                                              "bold $error")]
            for p in setup:
                rows.append((Content.styled("  ✗ ", "$error"), Content.assemble(
                    visible(p.problem), ("   fix: ", "$text-muted"), (visible(p.fix), "bold"))))
            box.update(HangingLines(rows))
        waiting, self._waiting = self._waiting, None
        if waiting is None:
            return
        # the answer to the recheck enter asked for: on a clear one, do what enter was pressed for
        if setup:
            self._say("git cannot record it yet: run the fix shown above, then press enter again "
                      "(escape keeps your reason).")
        else:
            self._say("")
            self.call_later(getattr(self, f"action_{waiting}"))

    @property
    def reason(self) -> str:
        """The reason as typed now."""
        return self.query_one("#reason", Input).value.strip()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "approve_anyway":
            return self.draft.verdict == "approve" and bool(self.draft.against)
        return True

    @on(Input.Submitted, "#reason")
    def _submitted(self) -> None:
        self.action_record()

    def _say(self, text: str) -> None:
        line = self.query_one("#verdict-error", Static)
        line.update(Content(text))
        line.set_class(not text, "-empty")  # on a short screen the evidence gets the row

    def _can_record(self) -> bool:
        if self.draft.verdict == "reject" and not self.reason:
            self._say("A reject needs a reason: say what is wrong.")
            return False
        if self.setup:
            self._say("git cannot record it yet: run the fix shown above (escape keeps your reason).")
            return False
        return True

    def _recheck_for(self, action: str) -> bool:
        """With a setup problem shown, ask git again and run `action` on a clear answer; True when it asked.

        The reviewer fixes git outside the dialog (the `git config` line shown),
        then presses enter: the answer shown is older than that fix.
        """
        if not self.setup or self.recheck is None or (self.draft.verdict == "reject" and not self.reason):
            return False
        self._waiting = action
        self._say("git cannot record it yet, as last checked: checking again…")
        self.recheck()
        return True

    def action_record(self) -> None:
        """Record the verdict, unless something stands against an approve."""
        if self._recheck_for("record") or not self._can_record():
            return
        if self.draft.verdict == "approve" and self.draft.against:
            n = len(self.draft.against)
            self._say(f"{n} thing{'s' if n != 1 else ''} stand{'' if n != 1 else 's'} against this approve "
                      f"(listed above): {CONFIRM_KEY} approves anyway, escape goes back.")
            self.query_one("#evidence", VerticalScroll).scroll_home(animate=False)
            return
        self.dismiss(VerdictAnswer(self.reason, True))

    def action_approve_anyway(self) -> None:
        """Approve although things stand against it."""
        if self._recheck_for("approve_anyway"):
            return
        if self._can_record():
            self.dismiss(VerdictAnswer(self.reason, True))

    def action_cancel(self) -> None:
        self.dismiss(VerdictAnswer(self.reason, False))
