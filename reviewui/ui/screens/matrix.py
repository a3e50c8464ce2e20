"""MatrixScreen: which test bit which hunk; tests that bit nothing are named decorative."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from reviewui.core.safe_text import visible


class MatrixScreen(ModalScreen[None]):
    """A hunk × test table built from the bite results so far."""

    BINDINGS = [Binding("escape,m,q", "dismiss", "Close")]

    DEFAULT_CSS = """
    MatrixScreen { align: center middle; }
    MatrixScreen > Vertical {
        width: 95%; height: 85%; padding: 1 2; background: $panel; border: round $accent;
    }
    MatrixScreen DataTable { height: 1fr; }
    MatrixScreen #decorative { height: auto; margin-top: 1; }
    """

    def __init__(self, hunks: list[tuple[str, str]], tests: list[str], bit: set[tuple[str, str]]) -> None:
        super().__init__()
        self.hunks = hunks
        self.tests = tests
        self.bit = bit

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content.assemble(("Which test bit which hunk", "bold $accent")))
            yield DataTable(id="matrix", zebra_stripes=True, cursor_type="row")
            decorative = [t for t in self.tests if not any((h, t) in self.bit for h, _ in self.hunks)]
            text = (
                Content.assemble(("Decorative (bit nothing): ", "bold $warning"), visible(", ".join(decorative)))
                if decorative and self.hunks
                else Content("")
            )
            yield Static(text, id="decorative")

    def on_mount(self) -> None:
        table = self.query_one("#matrix", DataTable)
        table.add_column(Content("hunk"), key="hunk")
        for i, _ in enumerate(self.tests):
            table.add_column(Content(f"T{i + 1}"), key=f"t{i}")
        for key, label in self.hunks:
            cells = [Content(visible(label))] + [
                Content.assemble(("●", "bold $success")) if (key, t) in self.bit else Content("·")
                for t in self.tests
            ]
            table.add_row(*cells, key=key)
        legend = "  ".join(f"T{i + 1} = {visible(t)}" for i, t in enumerate(self.tests))
        table.tooltip = legend
        self.query_one("#decorative", Static).tooltip = legend
