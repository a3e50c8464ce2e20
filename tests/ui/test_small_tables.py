"""The matrix and the truth table at 60x15 and 80x24, where a reviewer met them.

Walked in a terminal: at 60x15 the matrix showed no test row (the legend and
the decorative list took the room); the truth table cut parametrized ids at the
end, so cases read the same, its revert column was off-screen, and `End` did
nothing there. Both are drawn from the story of the demo's 04 (parametrized
cases, a long revert list) and 01 (a hunk whose revert only removes a name).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from reviewui.core.bite.truth_table import Bite, TestRow, TruthTable
from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.screens.matrix import MatrixHunk, MatrixScreen
from reviewui.ui.screens.tests_table import TestsTableScreen
from tests.ui.ready import review_ready

SIZES = [(60, 15), (80, 24)]
IDS = [f"{w}x{h}" for w, h in SIZES]
FILE = "tests/test_backoff_policy.py"
CASES = [f"{FILE}::test_the_delay_grows_until_it_reaches_the_cap[attempt-{n}-base-0.5]" for n in (1, 2, 3)]
REVERTS = (Bite("backoff/policy.py", 0), Bite("backoff/policy.py", 0, 31, "condition"),
           Bite("backoff/policy.py", 0, 33, "return"), Bite("backoff/policy.py", 1, 40, "statement"))


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample("01-trim-reasoning", tmp_path_factory.mktemp("tables")).repo_dir


def drawn(widget: DataTable | Static) -> list[str]:
    """The widget's lines as drawn now (what is scrolled into view)."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


def truth_table() -> TruthTable:
    rows = tuple(TestRow(t, FILE, 10, "added", "passes", "fails", "AssertionError: assert 0.5 == 1.0",
                         bitten_by=REVERTS[:n + 1]) for n, t in enumerate(CASES))
    return TruthTable("h" * 40, "b" * 40, "complete", tests=rows)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_matrix_shows_test_rows(story: Path, size: tuple[int, int]) -> None:
    tests = [f"tests/test_trim_reasoning.py::test_{name}" for name in
             ("clears_reasoning_of_the_truncated_turn", "nothing_to_clear_returns_none", "keeps_other_turns")]
    hunks = [MatrixHunk("coder/history.py:0", "coder/history.py:47", "broken", ran=False)]
    hunks += [MatrixHunk(f"coder/history.py:0#{n}", f"↳coder/history.py:{57 + n}", "condition bites")
              for n in range(7)]
    app = make_app(ReviewSession.open(story, "agent/trim-reasoning"))
    async with app.run_test(size=size) as pilot:
        await review_ready(app, pilot)
        screen = MatrixScreen(hunks, tests, {("coder/history.py:0#0", tests[0])})
        await app.push_screen(screen)
        await pilot.pause()
        lines = drawn(screen.query_one("#matrix", DataTable))
        rows = [line for line in lines if "test_" in line]
        assert rows, lines  # at least one test's row, not only the header and the verdict row
        assert any("clears_reasoning" in r for r in rows)
        legend = screen.query_one("#legend-short" if size[1] < 20 else "#legend", Static)
        assert legend.display and "● " in "".join(drawn(legend)) and "bit" in "".join(drawn(legend))  # explained


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_truth_table_keeps_cases_apart_and_reaches_its_revert_column(story: Path,
                                                                            size: tuple[int, int]) -> None:
    app = make_app(ReviewSession.open(story, "agent/trim-reasoning"))
    async with app.run_test(size=size) as pilot:
        await review_ready(app, pilot)
        screen = TestsTableScreen(truth_table())
        await app.push_screen(screen)
        await pilot.pause()
        grid = screen.query_one("#tests-table", DataTable)
        lines = drawn(grid)
        shown = [line for line in lines if "[attempt-" in line]
        assert len(shown) == len(CASES), lines  # every case has a row in view
        for n, line in enumerate(shown, 1):  # each row says which case it is: the ids are not cut at the end
            assert f"[attempt-{n}-base-0.5]" in line, line
        assert len(set(shown)) == len(shown)
        assert "fails with reverted" not in "".join(lines)  # it starts off-screen at this width
        await pilot.press("end")
        await pilot.pause()
        assert grid.cursor_coordinate.column == len(grid.columns) - 1
        lines = drawn(grid)
        assert "fails with reverted" in lines[0], lines  # End brought the revert column into view
        assert "backoff/policy.py hunk 1" in lines[1] and "[attempt-1" in lines[1], lines  # with its test's name
        await pilot.press("down", "down")
        await pilot.pause()
        # the line under the table says the row under the cursor in full: its id and every revert
        row = "".join(drawn(screen.query_one("#tests-row", Static)))
        assert CASES[2][:20] in row and "[attempt-3-base-0.5]" in row, row
        if size[1] >= 20:  # on a short screen the line has room for the id only; End shows the reverts
            assert "backoff/policy.py:33 return guard" in row
        await pilot.press("home")
        await pilot.pause()
        assert grid.cursor_coordinate.column == 0 and "fails with reverted" not in drawn(grid)[0]
