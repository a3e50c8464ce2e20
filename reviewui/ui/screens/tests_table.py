"""TestsTableScreen: the per-test truth table (each branch test at the head and on the base).

One row per test (parametrized cases by id) the branch adds or changes, then
the old tests it turned red. Every cell from the repository (test ids,
messages) is drawn terminal-safe; cells are plain `Text` so DataTable
measures them by their width.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from reviewui.core.bite.truth_table import TestRow, TruthTable
from reviewui.core.safe_text import visible

LEGEND = ("base: the branch's tests on the base commit's source — fails (it tests the change), "
          "errors (a name is missing), passes (it needs nothing of the change)")


def row_cells(t: TestRow) -> tuple[str, str, str, str, str]:
    """(test, change, head, base, what makes it fail) as plain text, terminal-safe."""
    base = t.base + (f": {t.base_message}" if t.base_message and t.base != "passes" else "")
    reverts = ", ".join(b.words() for b in t.bitten_by) or "—"
    return (visible(t.id), t.change, t.head, visible(base[:160]), visible(reverts[:200]))


class TestsTableScreen(ModalScreen[None]):
    """The truth table, read-only; `escape` closes it."""

    __test__ = False  # not a pytest test class, whatever its name

    BINDINGS = [Binding("escape,u,q", "dismiss", "Close", id="tests_table.close", tooltip="Close the table")]

    DEFAULT_CSS = """
    TestsTableScreen { align: center middle; }
    TestsTableScreen > Vertical {
        width: 95%; height: 90%; padding: 0 1; background: $panel; border: round $accent;
    }
    TestsTableScreen DataTable { height: 1fr; }
    TestsTableScreen #tests-legend, TestsTableScreen #tests-note { height: auto; color: $text-muted; }
    """

    def __init__(self, table: TruthTable | None, note: str | None = None) -> None:
        super().__init__()
        self.table = table
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content.assemble(("Per-test truth table", "bold $accent")))
            yield Static(Content(LEGEND), id="tests-legend")
            yield DataTable(id="tests-table", zebra_stripes=True, cursor_type="row")
            yield Static(Content(self._note()), id="tests-note")

    def _note(self) -> str:
        t = self.table
        if t is None:
            return self.note or "No truth table yet: B sweeps every hunk, then runs the branch's tests on the base."
        parts = [self.note] if self.note else []
        if t.status != "complete":
            parts.append(f"unavailable: {visible(t.reason)}")
        elif not t.tests and not t.regressions:
            parts.append("The branch adds or changes no test, and turned no old test red.")
        if t.already_red:
            parts.append(f"already red on the base (not counted): {visible(', '.join(t.already_red))[:300]}")
        return "   ".join(parts)

    def on_mount(self) -> None:
        grid = self.query_one("#tests-table", DataTable)
        for name in ("test", "change", "head", "base", "fails with reverted"):
            grid.add_column(name, key=name)
        if self.table is None:
            return
        for t in self.table.tests:
            cells = row_cells(t)
            grid.add_row(cells[0], cells[1], cells[2], Text(cells[3], style="bold" if t.base == "passes" else ""), cells[4], key=t.id)
        for t in self.table.regressions:
            cells = row_cells(t)
            grid.add_row(Text(cells[0], style="bold"), "REGRESSION", cells[2], cells[3], cells[4],
                         key="regression:" + t.id)

    def cell_text(self) -> list[list[str]]:
        """What the table shows, row by row, header first (for tests)."""
        grid = self.query_one("#tests-table", DataTable)
        header = [str(c.label) for c in grid.ordered_columns]
        return [header, *([str(cell) for cell in grid.get_row_at(i)] for i in range(grid.row_count))]
