"""WitnessModal: a toothless guard's witness, the call on which it matters; `k` keeps it as a probe.

Everything shown here came from a run of the branch's code (the call's
arguments, what the head and the revert answered, the test made of them), so
it is drawn as literal text with control characters made visible, never as
markup. A guard with no witness shows how hard it was looked for (`none
found in N tries`: likely equivalent), dimmed.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from reviewui.core.safe_text import visible
from reviewui.core.witness.model import Witness
from reviewui.ui.widgets.key_footer import ModalFooter

KEEP = "keep"
"""What the modal dismisses with when the reviewer keeps the witness as a probe."""


class WitnessModal(ModalScreen[str | None]):
    """One witness (or why there is none); dismisses with KEEP to keep its test as a probe, else None."""

    BINDINGS = [
        Binding("k", "keep", "Keep as probe", id="witness.keep",
                tooltip="Keep the witness as a probe test asserting the head's answer: it bites this guard"),
        Binding("escape,w,q", "close", "Close", id="witness.close", tooltip="Close the witness"),
    ]

    DEFAULT_CSS = """
    WitnessModal { align: center middle; }
    WitnessModal > Vertical {
        width: 95%; height: auto; max-height: 90%; padding: 1 2; background: $panel; border: round $accent;
    }
    WitnessModal #witness-title { text-style: bold; margin-bottom: 1; }
    WitnessModal #witness-grade { margin-bottom: 1; }
    WitnessModal #witness-test { height: auto; max-height: 20; border: round $panel-lighten-2; }
    """

    def __init__(self, where: str, witness: Witness) -> None:
        super().__init__()
        self.where = where
        """The guard (file, line, description) or hunk it belongs to."""
        self.witness = witness

    def compose(self) -> ComposeResult:
        w = self.witness
        with Vertical():
            yield Static(Content.assemble(("Witness  ", "bold $accent"), visible(self.where)), id="witness-title")
            if w.found:
                lines = [Content.assemble(("call      ", "bold"), visible(w.call)),
                         Content.assemble(("head      ", "bold"), (visible(w.head), "$success")),
                         Content.assemble(("reverted  ", "bold"), (visible(w.reverted), "$error")),
                         Content.assemble((f"no test checks this case ({w.tries} tries, {w.seconds:.1f}s; "
                                           "re-verified: the test below passes at the head and fails reverted)",
                                           "$text-muted"))]
                yield Static(Content("\n").join(lines), id="witness-grade")
                with VerticalScroll(id="witness-test"):
                    yield Static(Content(visible(w.test, multiline=True)), id="witness-code")
            else:
                yield Static(Content.styled(visible(w.words()), "$text-muted"), id="witness-grade")
        yield ModalFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "keep":
            return self.witness.found  # nothing to keep without one
        return True

    def action_keep(self) -> None:
        self.dismiss(KEEP)

    def action_close(self) -> None:
        self.dismiss(None)
