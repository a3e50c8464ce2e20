"""The matrix tells "could not run" from "still passed", keeps its names and verdict row, and scrolls sideways."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from reviewui.ui.app import make_app
from reviewui.ui.screens.matrix import LEGEND, MISSED, NOT_RUN, MatrixHunk, MatrixScreen
from reviewui.core.session import ReviewSession

TESTS = ["tests/test_a.py::test_one", "tests/test_a.py::test_two"]


def columns(n: int) -> list[MatrixHunk]:
    hunks = [MatrixHunk("a.py:0", "a.py:3", "bites"), MatrixHunk("a.py:1", "a.py:30", "broken", ran=False),
             MatrixHunk("a.py:1#0", "↳a.py:31", "condition timeout", ran=False)]
    hunks += [MatrixHunk(f"b.py:{i}", f"pkg/some/long/path/module_{i}.py:{i * 10}", "toothless") for i in range(n)]
    return hunks


async def test_could_not_run_has_its_own_mark_and_legend(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=(100, 24)) as pilot:
        screen = MatrixScreen(columns(0), TESTS, {("a.py:0", TESTS[0])})
        await app.push_screen(screen)
        await pilot.pause()
        header, verdicts, one, two = screen.cell_text()
        assert one[1:] == ["●", NOT_RUN, NOT_RUN] and two[1:] == [MISSED, NOT_RUN, NOT_RUN]
        assert NOT_RUN != MISSED
        legend = str(screen.query_one("#legend", Static).render())
        assert legend == LEGEND and f"{NOT_RUN} it could not run" in legend


async def test_a_wide_matrix_scrolls_sideways_keeping_names_and_verdicts(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=(100, 24)) as pilot:
        screen = MatrixScreen(columns(12), TESTS, set())
        await app.push_screen(screen)
        await pilot.pause()
        table = screen.query_one("#matrix", DataTable)
        assert table.fixed_columns == 1 and table.fixed_rows == 1  # test names and the verdict row stay
        assert table.virtual_size.width > table.size.width
        for _ in range(14):
            await pilot.press("l")
        await pilot.pause()
        assert table.scroll_x > 0  # the columns past the edge came into sight
        assert table.cursor_coordinate.column == 14
        await pilot.press("h")
        await pilot.pause()
        assert table.cursor_coordinate.column == 13
