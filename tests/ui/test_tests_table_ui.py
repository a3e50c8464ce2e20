"""The app and the evidence store: stored results shown on reopen with their age (stale when the head moved),
the per-test truth table view on `u`, and a sweep in the app kept for the next session."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from reviewui.core.bite.truth_table import Bite, TestRow
from reviewui.core.session import ReviewSession, RunOptions
from reviewui.ui.app import make_app
from reviewui.ui.messages import TruthTableReady
from reviewui.ui.screens.tests_table import TestsTableScreen, row_cells
from reviewui.ui.widgets.review_header import ReviewHeader
from tests.core.bite.test_truth_table import GREEN_BASE, GREEN_BRANCH
from tests.gitrepo import make_repo
from tests.ui.ready import review_ready
from tests.project_python import pytest_command

pytestmark = pytest.mark.slow
SIZE = (160, 40)


def open_session(root: Path) -> ReviewSession:
    return ReviewSession.open(root, "agent/work", run=RunOptions(test_cmd=pytest_command()))


@pytest.fixture
def stored_repo(tmp_path: Path):
    rb = make_repo(tmp_path / "r", GREEN_BASE, GREEN_BRANCH)
    first = open_session(rb.root)
    report = first.bite(guards=True)
    assert first.save_evidence(report, first.tests_table(report))
    return rb, report


async def test_reopened_review_shows_stored_results_and_the_table(stored_repo) -> None:
    rb, report = stored_repo
    session = open_session(rb.root)  # a new session: only the store knows the sweep
    app = make_app(session, initial_file="pkg/calc.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        status = screen.query_one(ReviewHeader).status
        assert status.startswith("stored results from ") and ", this head (B reruns)" in status
        assert set(screen.ledger.bites) == {r.key for r in report.results}
        await pilot.press("u")
        await pilot.pause()
        table = app.screen
        assert isinstance(table, TestsTableScreen)
        cells = {row[0]: row for row in table.cell_text()[1:]}
        assert cells["test_sub"][3].startswith("errors: ModuleNotFoundError")
        assert cells["test_clamp[mid]"][3] == "passes"
        assert "pkg/calc.py hunk 1" in cells["test_clamp[low]"][4]
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


async def test_a_moved_head_shows_the_stored_results_as_stale_only(stored_repo) -> None:
    rb, _ = stored_repo
    rb.checkout("agent/work")
    rb.commit({"pkg/ops.py": "def sub(a, b):\n    return a - b - 0\n"}, "agent again")
    rb.checkout("main")
    app = make_app(open_session(rb.root))
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        assert "stale: head changed (B reruns)" in screen.query_one(ReviewHeader).status
        assert screen.ledger.bites == {} and screen.ledger.truth_table is None
        await pilot.press("u")
        await pilot.pause()
        assert isinstance(app.screen, TestsTableScreen) and app.screen.cell_text()[1:] == []


async def test_a_sweep_in_the_app_makes_the_table_and_keeps_it(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", GREEN_BASE, GREEN_BRANCH)
    app = make_app(open_session(rb.root), initial_file="pkg/calc.py")
    made = asyncio.Event()

    def seen(message: object) -> None:
        if isinstance(message, TruthTableReady):
            made.set()

    async with app.run_test(size=SIZE, message_hook=seen) as pilot:
        screen = await review_ready(app, pilot)
        assert screen.query_one(ReviewHeader).status == ""  # nothing stored yet
        await pilot.press("B")
        await asyncio.wait_for(made.wait(), 120)  # the sweep, then its truth table
        await app.workers.wait_for_complete()  # the findings with the table's
        await pilot.pause()
        table = screen.ledger.truth_table
        assert table is not None and table.status == "complete"
        assert any(f.kind == "test-passes-on-base" for f in screen.ledger.findings)
    later = open_session(rb.root).stored()
    assert later.bite is not None and later.bite.current and later.table is not None


async def test_after_a_sweep_the_status_says_how_it_ended_not_the_tables_progress(tmp_path: Path) -> None:
    # The sweep's words ("bite-check done: ...") were overwritten by the truth table's base-run
    # progress ("bite-check: base run: 7/7 tests, 1s"), which then stayed for good.
    from textual.widgets import Static

    from reviewui.core.bite.progress import TestsProgress
    from reviewui.ui.messages import TestsProgressed

    rb = make_repo(tmp_path / "r", GREEN_BASE, GREEN_BRANCH)
    app = make_app(open_session(rb.root), initial_file="pkg/calc.py")
    made: list[TruthTableReady] = []
    arrived = asyncio.Event()

    def seen(message: object) -> None:
        if isinstance(message, TruthTableReady):
            made.append(message)
            arrived.set()

    def status() -> str:
        return str(app.screen.query_one("#status", Static).render())

    async with app.run_test(size=SIZE, message_hook=seen) as pilot:
        screen = await review_ready(app, pilot)
        await pilot.press("B")
        await asyncio.wait_for(arrived.wait(), 120)  # the sweep, then its truth table
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert made[0].table is not None
        final = status()
        assert final.startswith("bite-check done: ")
        # the table's base run reporting as it goes (a long one does), then the table coming in
        screen.bites_part.tabling = True
        screen.post_message(TestsProgressed(TestsProgress("base run", 3, 7, 1.0)))
        await pilot.pause()
        assert status().startswith("truth table: ")  # said as the table's, not as the sweep's
        screen.post_message(TruthTableReady(made[0].table))
        await pilot.pause()
        assert status() == final
        # a table arriving while another bite-check runs leaves that run's status alone
        screen.bites_part.biting = True
        screen.set_status("bite-check: 1/3 hunks done (escape cancels)")
        screen.post_message(TruthTableReady(made[0].table))
        await pilot.pause()
        assert status() == "bite-check: 1/3 hunks done (escape cancels)"
        screen.bites_part.biting = False


def test_table_cells_are_terminal_safe() -> None:
    row = TestRow("t.py::test_x[\x1b[2J]", "t.py", 1, "added", "passes", "errors", "NameError: \x1b]52;c;aGk=\x07",
                  bitten_by=(Bite("src/\x1b[31m.py", 0),))
    cells = row_cells(row)
    assert not any("\x1b" in c or "\x07" in c for c in cells)


async def test_fresh_shows_nothing_stored(stored_repo) -> None:
    rb, _ = stored_repo
    session = ReviewSession.open(rb.root, "agent/work", run=RunOptions(test_cmd=pytest_command(),
                                                                       fresh=True))
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        assert screen.query_one(ReviewHeader).status == "" and screen.ledger.bites == {}
