"""FindingsScreen: every finding by severity; enter jumps to its place in the diff."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from reviewui.core.safe_text import visible
from reviewui.ui.widgets.hanging import HangingLines
from reviewui.ui.widgets.key_footer import ModalFooter

SEVERITY_STYLE = {"error": "bold $error", "warning": "bold $warning", "info": "$text-muted"}
ORDER = {"error": 0, "warning": 1, "info": 2}


TRUST_BRANCH_CONFIG = "trust-branch-config"
"""What the screen dismisses with when the reviewer accepts the branch's own config changes."""
TURN = "\0turn"
"""First item of what the screen dismisses with to show a transcript turn: (TURN, index)."""


class FindingsScreen(ModalScreen[tuple[str, int | None] | str | None]):
    """Findings listed error first; dismisses with (file, line) to jump there, TRUST_BRANCH_CONFIG, or None."""

    BINDINGS = [
        Binding("escape,F,q", "close", "Close", id="findings.close"),
        Binding("enter", "goto", "Go to it", id="findings.goto", tooltip="Show the finding's place in the diff"),
        Binding("T", "trust_config", "Trust branch config", id="findings.trust_config",
                tooltip="Apply the branch's own reviewui config changes (config-changed) for this review"),
    ]

    DEFAULT_CSS = """
    FindingsScreen { align: center middle; }
    FindingsScreen > Vertical {
        width: 95%; height: 85%; padding: 1 2; background: $panel; border: round $accent;
    }
    FindingsScreen OptionList { height: 1fr; }
    FindingsScreen #evidence { height: auto; max-height: 12; margin-top: 1; color: $text-muted; }
    /* A short terminal (60x15, say): the list first; the selected finding's evidence gets what is left */
    FindingsScreen.-short > Vertical { height: 100%; padding: 0 1; }
    FindingsScreen.-short OptionList { min-height: 3; border: none; }
    FindingsScreen.-short #evidence { max-height: 3; margin-top: 0; }
    """

    VERTICAL_BREAKPOINTS = [(0, "-short"), (24, "-tall")]
    """Below 24 rows the findings list takes the room (with its border and the dialog's padding it had none)."""

    def __init__(self, findings: list[Any], computing: bool = False, can_trust: bool = False) -> None:
        super().__init__()
        self.can_trust = can_trust and any(f.kind == "config-changed" for f in findings)
        self.findings = sorted(findings, key=lambda f: (ORDER.get(f.severity, 3), f.file or "", f.line or 0))
        self.computing = computing

    def compose(self) -> ComposeResult:
        counts = {s: sum(1 for f in self.findings if f.severity == s) for s in ORDER}
        title = Content.assemble(
            ("Findings  ", "bold $accent"),
            (f"{counts['error']} error  ", SEVERITY_STYLE["error"]),
            (f"{counts['warning']} warning  ", SEVERITY_STYLE["warning"]),
            (f"{counts['info']} info", SEVERITY_STYLE["info"]),
            ("   (still computing…)" if self.computing else "", "$text-muted"),
        )
        with Vertical():
            yield Static(title)
            options = [  # a long message wraps under the kind, clear of the severity column
                Option(HangingLines([(Content.styled(f"{f.severity:<8}", SEVERITY_STYLE.get(f.severity, "")),
                                      Content.assemble(
                                          (f"{f.kind:<28}", "bold"),
                                          f"{visible(f.file or '(branch)')}{':' + str(f.line) if f.line else ''}  ",
                                          visible(f.message)))]),
                       id=str(i))
                for i, f in enumerate(self.findings)
            ]
            if not options:
                options = [Option(Content("No findings."), disabled=True)]
            yield OptionList(*options, id="findings-list")
            yield Static("", id="evidence")
        yield ModalFooter()

    @on(OptionList.OptionHighlighted, "#findings-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id is None:
            return
        f = self.findings[int(event.option.id)]
        self.query_one("#evidence", Static).update(Content(visible(f.evidence or "", multiline=True)))

    @on(OptionList.OptionSelected, "#findings-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is None:
            return
        f = self.findings[int(event.option.id)]
        turn = f.symbol.removeprefix("turn ") if f.symbol and f.symbol.startswith("turn ") else ""
        if f.file:
            self.dismiss((f.file, f.line))
        elif turn.isdigit():
            self.dismiss((TURN, int(turn)))  # a claim: the transcript turn that made it
        else:
            self.notify("This finding is about the whole branch, not one place", timeout=3)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer `T` only when the branch changes reviewui's config and it is not accepted yet."""
        return self.can_trust if action == "trust_config" else True

    def action_goto(self) -> None:
        """Go to the highlighted finding (enter on the list does the same)."""
        found = self.query_one("#findings-list", OptionList)
        if found.highlighted is not None:
            found.action_select()

    def action_trust_config(self) -> None:
        self.dismiss(TRUST_BRANCH_CONFIG)

    def action_close(self) -> None:
        self.dismiss(None)
