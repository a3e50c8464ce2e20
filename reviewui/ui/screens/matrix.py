"""MatrixScreen: which test bit which hunk; tests that bit nothing are named decorative.

Tests are rows (their short names), hunks are columns labelled `file:line`.
Cells and labels are `Text`: DataTable measures those by their cell width,
where a `Content` label counts as one column and every column collapsed to a
single character; and it reads a plain `str` as Rich markup, where a
parametrized name's `[case]` would vanish.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from reviewui.core.safe_text import visible
from reviewui.core.hunks import Hunk
from reviewui.ui.widgets.key_footer import ModalFooter

BIT = "●"
MISSED = "·"
NOT_RUN = "✗"
LEGEND = (f"{BIT} the test failed with the hunk reverted (it bit)   {MISSED} it still passed   "
          f"{NOT_RUN} it could not run (collection or import error, timeout)   columns: hunks as file:line")

SHORT_LEGEND = f"{BIT} bit   {MISSED} still passed   {NOT_RUN} could not run   columns: file:line"
"""The legend on a short screen (one line), so the table keeps rows to show."""

SHORT_HEIGHT = 20
"""Below this many rows the screen is short: one-line legend, at most two lines of decorative tests."""

COULD_NOT_RUN = frozenset({"broken", "timeout", "error"})
"""Bite verdicts of a revert whose tests could not run: no test can be said to have passed or bitten."""


@dataclass(frozen=True)
class MatrixHunk:
    """One column of the matrix: a bite-checked hunk."""

    key: str
    """Identity used in `bit` pairs."""
    label: str
    """`file:line` (1-based line of the hunk's first new line)."""
    verdict: str
    """The bite verdict: bites, toothless, uncovered, broken, ... (a guard's: `kind verdict`)."""
    ran: bool = True
    """False when the revert's tests could not run (see COULD_NOT_RUN): its cells say so, not "still passed"."""


def hunk_label(hunk: Hunk) -> str:
    """`file:line`: the branch-side line of the hunk's first added line (where a pure removal sits)."""
    line_no = hunk.new_start
    for line in hunk.lines:
        if line.kind == "added":
            return f"{hunk.file}:{line.new_no}"
        if line.kind == "context" and line.new_no is not None:
            line_no = line.new_no + 1
    return f"{hunk.file}:{line_no}"


def short_names(tests: list[str]) -> dict[str, str]:
    """Each test id's short name: the part after the last `::`, with its file when two share a name."""
    short = {t: t.rsplit("::", 1)[-1] for t in tests}
    clash = {s for s in short.values() if list(short.values()).count(s) > 1}
    return {t: (t if s in clash else s) for t, s in short.items()}


class MatrixScreen(ModalScreen[None]):
    """A test × hunk table built from the bite results so far."""

    BINDINGS = [
        Binding("escape,m,q", "dismiss", "Close", id="matrix.close"),
        Binding("l", "column(1)", "Next column", id="matrix.next_column", key_display="→/l",
                tooltip="Next hunk column (the table scrolls sideways; the test names stay)"),
        Binding("h", "column(-1)", "Prev column", id="matrix.prev_column",
                key_display="←/h", tooltip="Previous hunk column"),
    ]

    DEFAULT_CSS = """
    MatrixScreen { align: center middle; }
    MatrixScreen > Vertical {
        width: 95%; height: 90%; padding: 0 1; background: $panel; border: round $accent;
    }
    MatrixScreen DataTable { height: 1fr; min-height: 4; }
    MatrixScreen #legend { height: auto; color: $text-muted; }
    MatrixScreen #legend-short { display: none; height: 1; color: $text-muted; }
    MatrixScreen #decorative { height: auto; }
    MatrixScreen.-short #legend { display: none; }
    MatrixScreen.-short #legend-short { display: block; }
    MatrixScreen.-short #decorative { max-height: 2; }
    """

    def __init__(self, hunks: list[MatrixHunk], tests: list[str], bit: set[tuple[str, str]]) -> None:
        super().__init__()
        self.hunks = hunks
        self.tests = tests
        self.bit = bit

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content.assemble(("Which test bit which hunk", "bold $accent")))
            yield Static(Content(LEGEND), id="legend")
            yield Static(Content(SHORT_LEGEND), id="legend-short")
            # The test names and the verdict row stay while the table scrolls either way.
            yield DataTable(id="matrix", zebra_stripes=True, cursor_type="cell", fixed_columns=1, fixed_rows=1)
            decorative = [t for t in self.tests if not any((h.key, t) in self.bit for h in self.hunks)]
            text = (
                Content.assemble(("Decorative (bit nothing): ", "bold $warning"), visible(", ".join(decorative)))
                if decorative and self.hunks
                else Content("" if self.hunks else "No bite-checks yet: b checks the hunk under the cursor, B all.")
            )
            yield Static(text, id="decorative")
        yield ModalFooter()

    def on_resize(self) -> None:
        self.set_class(self.size.height < SHORT_HEIGHT, "-short")

    def on_mount(self) -> None:
        self.on_resize()
        table = self.query_one("#matrix", DataTable)
        names = short_names(self.tests)
        first = max([len("verdict"), *(len(n) for n in names.values())])
        table.add_column("test", key="test", width=min(first, 60))
        for h in self.hunks:
            # Text, never str: DataTable reads a str as markup, and `[x]` in a name would vanish
            table.add_column(Text(visible(h.label)), key=h.key, width=max(len(h.label), len(h.verdict)))
        theme = self.app.current_theme  # DataTable cells are Rich Text: the theme's colours, by value
        bit_style = f"bold {theme.success or 'green'}"
        not_run_style = f"bold {theme.warning or 'yellow'}"
        table.add_row(Text("verdict", style="italic"), *(Text(h.verdict, style="italic") for h in self.hunks),
                      key="-verdict")
        for t in self.tests:
            cells = [Text(BIT, style=bit_style) if (h.key, t) in self.bit
                     else (MISSED if h.ran else Text(NOT_RUN, style=not_run_style)) for h in self.hunks]
            table.add_row(Text(visible(names[t])), *cells, key=t)

    def action_column(self, direction: int) -> None:
        """Move the cell cursor one hunk column sideways (the table scrolls to keep it in sight)."""
        table = self.query_one("#matrix", DataTable)
        if direction > 0:
            table.action_cursor_right()
        else:
            table.action_cursor_left()

    def cell_text(self) -> list[list[str]]:
        """What the table shows, row by row, header first (for tests and the headless twin's eye)."""
        table = self.query_one("#matrix", DataTable)
        header = [str(c.label) for c in table.ordered_columns]
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        return [header, *rows]
