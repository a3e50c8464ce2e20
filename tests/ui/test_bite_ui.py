"""`b` and `B` from the keyboard on a real repo: badges, results panel, matrix."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.session import ReviewSession, RunOptions
from reviewui.ui.app import make_app
from reviewui.ui.screens.matrix import MatrixScreen
from reviewui.ui.widgets.results_panel import ResultsPanel
from tests.gitrepo import make_repo
from tests.project_python import pytest_command

pytestmark = pytest.mark.slow
SIZE = (140, 40)

FILLER = "".join(f"C{i} = {i}\n" for i in range(8))
BASE = {
    "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['.']\n",
    "calc.py": "def clamp(x):\n    return x\n\n\n" + FILLER + "\n\ndef double(x):\n    return x * 2\n" + FILLER + "\n\ndef unused(x):\n    return x\n",
    "tests/test_base.py": "def test_nothing():\n    assert True\n",
}
BRANCH = {
    "calc.py": (
        "def clamp(x):\n    if x < 0:\n        return 0\n    return x\n\n\n" + FILLER + "\n\n"
        "def double(x):\n    y = x * 2\n    return y\n" + FILLER + "\n\n"
        "def unused(x):\n    return x + 1\n"
    ),
    "tests/test_calc.py": (
        "from calc import clamp, double\n\n\n"
        "def test_clamp():\n    assert clamp(-1) == 0\n\n\n"
        "def test_double():\n    double(2)\n"
    ),
}


@pytest.fixture
def session(tmp_path: Path) -> ReviewSession:
    make_repo(tmp_path / "r", BASE, BRANCH)
    # The interpreter running these tests has coverage installed; PATH's python may not.
    return ReviewSession.open(tmp_path / "r", "agent/work", run=RunOptions(test_cmd=pytest_command()))


def panel_text(app) -> str:
    from textual.widgets import Static

    return str(app.screen.query_one(ResultsPanel).query_one("#results-text", Static).render())


async def test_b_bites_current_hunk_and_shows_evidence(session: ReviewSession) -> None:
    app = make_app(session, initial_file="calc.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        view = screen.diff_view
        hunk = view.current_hunk
        assert hunk is not None and "if x < 0" in hunk.text
        await pilot.press("b")
        await app.workers.wait_for_complete()
        await pilot.pause()
        result = screen.ledger.bites[("calc.py", hunk.index)]
        assert result.verdict == "bites"
        assert [b.text for b in view.badges[hunk.index]][0] == "bites"
        text = panel_text(app)
        assert "BITES" in text and "tests/test_calc.py::test_clamp" in text
        assert "1 bite " in screen.file_list.summaries["calc.py"].plain  # issue 16: "1 bite", not "1 bites"
        servers = screen.bites_part.cache.warm_servers()
        assert len(servers) == 1 and servers[0].running
    # The check ran on the session's warm pytest server; leaving the app stops it.
    assert not servers[0].running


async def test_sweep_streams_every_hunk_and_matrix_names_decorative(session: ReviewSession) -> None:
    app = make_app(session, initial_file="calc.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.press("B")
        assert screen.bites_part.biting
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not screen.bites_part.biting
        verdicts = sorted(r.verdict for r in screen.ledger.bites.values())
        f = session.diff.file("calc.py")
        assert len(screen.ledger.bites) == len(f.hunks)
        assert verdicts == ["bites", "toothless", "uncovered"]
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, MatrixScreen)
        from textual.widgets import Static

        decorative = str(app.screen.query_one("#decorative", Static).render())
        assert "tests/test_calc.py::test_double" in decorative
        assert "test_clamp" not in decorative
        # what is drawn: tests as rows by short name, hunks as file:line columns, readable cells
        header, verdicts, *rows = app.screen.cell_text()
        hunk_cols = [n for n, c in enumerate(header) if not c.startswith("↳")]  # guard columns follow their hunk
        header, verdicts = [header[n] for n in hunk_cols], [verdicts[n] for n in hunk_cols]
        rows = [[r[n] for n in hunk_cols] for r in rows]
        assert header == ["test", "calc.py:2", "calc.py:18", "calc.py:31"]
        assert sorted(verdicts[1:]) == ["bites", "toothless", "uncovered"]
        by_name = {r[0]: r[1:] for r in rows}
        assert by_name["test_clamp"] == ["●", "·", "·"] and by_name["test_double"] == ["·", "·", "·"]
        from textual.widgets import DataTable

        table = app.screen.query_one(DataTable)
        # every column is as wide as its label, not one character
        widths = [c.get_render_width(table) - 2 * table.cell_padding for c in table.ordered_columns
                  if not str(c.label).startswith("↳")]  # guard columns follow their hunk
        assert widths[1:] == [9, 10, 10]


async def test_b_on_a_test_hunk_is_refused(session: ReviewSession) -> None:
    app = make_app(session, initial_file="tests/test_calc.py")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        await pilot.pause()
        assert app.screen.ledger.bites == {} and not app.screen.bites_part.biting


async def test_cancelling_a_rerun_keeps_the_earlier_result(session: ReviewSession) -> None:
    import dataclasses

    from reviewui.ui.messages import BiteResult

    app = make_app(session, initial_file="calc.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        hunk = screen.diff_view.current_hunk
        await pilot.press("b")
        await app.workers.wait_for_complete()
        await pilot.pause()
        first = screen.ledger.bites[("calc.py", hunk.index)]
        assert first.verdict == "bites"
        # the rerun was cancelled before it checked this hunk: what the engine reports then
        cancelled = dataclasses.replace(first, verdict="skipped", reason="cancelled", failing_tests=())
        screen.post_message(BiteResult(cancelled))
        await pilot.pause()
        assert screen.ledger.bites[("calc.py", hunk.index)] is first
        assert "BITES" in panel_text(app) and "cancelled" not in panel_text(app)
        # a hunk never checked before does show that it was cancelled
        other = dataclasses.replace(cancelled, index=hunk.index + 1)
        screen.post_message(BiteResult(other))
        await pilot.pause()
        assert screen.ledger.bites[("calc.py", hunk.index + 1)].verdict == "skipped"
