"""TestsTableScreen: the per-test truth table (each branch test at the head and on the base).

One row per test (parametrized cases by id) the branch adds or changes, then
the old tests it turned red. Every cell from the repository (test ids,
messages) is drawn terminal-safe; cells are plain `Text` so DataTable
measures them by their width.

Tests are named as the matrix names them (the part after the last `::`, with
its file when two share it), so parametrized cases keep their ids in sight;
long cells are cut to a width, and the line under the table says the row
under the cursor in full. The test column stays while the cursor moves cell
by cell to the other columns (`End`: the last one).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from reviewui.core.bite.truth_table import TestRow, TruthTable
from reviewui.core.safe_text import visible
from reviewui.ui.screens.matrix import short_names
from reviewui.ui.widgets.key_footer import ModalFooter

LEGEND = ("base: the branch's tests on the base commit's source — fails (it tests the change), "
          "errors (a name is missing), passes (it needs nothing of the change)")
SHORT_LEGEND = "base: fails (tests the change), errors (a name is missing), passes (needs none of it)"
"""The legend on a short screen (one line at 90 columns, two at 60, so the table keeps its rows)."""

SHORT_HEIGHT = 20
"""Below this many rows the screen is short: one-line legend."""

WIDTHS = {"test": 48, "base": 40, "fails with reverted": 48}
"""The widest a column is drawn (the line under the table says the current row in full)."""

TEST_SHARE = 0.4
"""The test column, which stays while the others scroll, takes at most this share of the screen's width."""


def cut_middle(text: str, width: int) -> str:
    """`text` within `width` cells, cut in the middle; a parametrized id keeps its `[case]` whole where it can."""
    if cell_len(text) <= width:
        return text
    case = text[text.find("["):] if "[" in text else ""
    if case and cell_len(case) <= width - 4:
        name = text[:len(text) - len(case)]
        while cell_len(name) + 1 + cell_len(case) > width:
            name = name[:-1]
        return name + "…" + case
    head, tail = text[:(width - 1) // 2], text[(width - 1) // 2:]
    while cell_len(head) + 1 + cell_len(tail) > width:
        tail = tail[1:]
    return head + "…" + tail


def cut_end(text: str, width: int) -> str:
    """`text` within `width` cells, cut at the end."""
    if cell_len(text) <= width:
        return text
    while cell_len(text) + 1 > width:
        text = text[:-1]
    return text + "…"


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
        border-title-color: $accent; border-title-style: bold;
    }
    TestsTableScreen DataTable { height: 1fr; min-height: 3; }
    TestsTableScreen #tests-legend, TestsTableScreen #tests-note { height: auto; color: $text-muted; }
    TestsTableScreen #tests-legend-short { display: none; height: auto; max-height: 2; color: $text-muted; }
    TestsTableScreen.-short #tests-legend { display: none; }
    TestsTableScreen.-short #tests-legend-short { display: block; }
    TestsTableScreen #tests-row { height: auto; max-height: 6; }
    TestsTableScreen.-short #tests-row { max-height: 3; }
    TestsTableScreen.-short #tests-note { max-height: 2; }
    """

    def __init__(self, table: TruthTable | None, note: str | None = None) -> None:
        super().__init__()
        self.table = table
        self.note = note
        rows = [*table.tests, *table.regressions] if table is not None else []
        self.names = {t: visible(n) for t, n in short_names([t.id for t in rows]).items()}
        """Test id -> the name its row shows (the matrix's short names)."""
        self.rows: dict[str, TestRow] = {}
        """Row key -> its test row (for the line under the table)."""

    def compose(self) -> ComposeResult:
        with Vertical() as frame:
            frame.border_title = "Per-test truth table"  # in the frame: one more row for the table
            yield Static(Content(LEGEND), id="tests-legend")
            yield Static(Content(SHORT_LEGEND), id="tests-legend-short")
            yield DataTable(id="tests-table", zebra_stripes=True, cursor_type="cell", fixed_columns=1)
            yield Static(Content(""), id="tests-row")
            yield Static(Content(self._note()), id="tests-note")
        yield ModalFooter()

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

    def on_resize(self) -> None:
        self.set_class(self.size.height < SHORT_HEIGHT, "-short")

    def on_mount(self) -> None:
        self.on_resize()
        grid = self.query_one("#tests-table", DataTable)
        rows = [] if self.table is None else [("", t) for t in self.table.tests] + [
            ("regression:", t) for t in self.table.regressions]
        cells = [(prefix, t, row_cells(t)) for prefix, t in rows]
        longest = {"test": max([cell_len(self.names[t.id]) for _, t, _ in cells], default=0),
                   "base": max([cell_len(c[3]) for _, _, c in cells], default=0),
                   "fails with reverted": max([cell_len(c[4]) for _, _, c in cells], default=0)}
        widths = {**WIDTHS, "test": max(16, min(WIDTHS["test"], int(self.app.size.width * TEST_SHARE)))}
        for name in ("test", "change", "head", "base", "fails with reverted"):
            width = min(widths[name], max(len(name), longest[name])) if name in widths else None
            grid.add_column(name, key=name, width=width)
        for prefix, t, c in cells:
            name = cut_middle(self.names[t.id], widths["test"])
            # Text, never str: DataTable reads a str as markup, and a case's `[id]` would vanish
            base = Text(cut_end(c[3], WIDTHS["base"]), style="bold" if t.base == "passes" and not prefix else "")
            reverts = Text(cut_end(c[4], WIDTHS["fails with reverted"]))
            if prefix:
                grid.add_row(Text(name, style="bold"), "REGRESSION", c[2], base, reverts, key=prefix + t.id)
            else:
                grid.add_row(Text(name), c[1], c[2], base, reverts, key=t.id)
            self.rows[prefix + t.id] = t
        self._show_row()

    def on_data_table_cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        self._show_row()

    def _show_row(self) -> None:
        """The row under the cursor in full under the table: its whole id, base outcome and reverts."""
        grid = self.query_one("#tests-table", DataTable)
        if not grid.row_count:
            return
        key = grid.coordinate_to_cell_key(grid.cursor_coordinate).row_key.value
        t = self.rows.get(key or "")
        if t is None:
            return
        _, change, head, base, reverts = row_cells(t)
        self.query_one("#tests-row", Static).update(Content.assemble(
            (visible(t.id), "bold"), "\nfails with reverted: ", reverts, f"\n{change}; at the head {head}; base: ",
            base))

    def cell_text(self) -> list[list[str]]:
        """What the table shows, row by row, header first (for tests)."""
        grid = self.query_one("#tests-table", DataTable)
        header = [str(c.label) for c in grid.ordered_columns]
        return [header, *([str(cell) for cell in grid.get_row_at(i)] for i in range(grid.row_count))]
