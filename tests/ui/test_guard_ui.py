"""`b` on a new function grades its guard reverts: gutter marks, the results panel, jumps, the matrix."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from reviewui.core.session import ReviewSession, RunOptions
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.screens.matrix import MatrixScreen
from reviewui.ui.widgets.results_panel import ResultsPanel
from tests.project_python import pytest_command

pytestmark = pytest.mark.slow
SIZE = (160, 44)


@pytest.fixture
def session(tmp_path: Path) -> ReviewSession:
    repo = build_sample("01-trim-reasoning", tmp_path).repo_dir
    return ReviewSession.open(repo, "agent/trim-reasoning", run=RunOptions(test_cmd=pytest_command()))


def panel_text(app) -> str:
    return str(app.screen.query_one(ResultsPanel).query_one("#results-text", Static).render())


def gutter_cell(view, line: int) -> str:
    """The last gutter cell drawn for branch-side `line` (where the guard mark goes)."""
    y = view.row_for_line(line)
    assert y is not None
    strip = view._render_row(view.rows[y], 120, 0)
    return "".join(seg.text for seg in strip)[13]


async def test_b_on_a_new_function_shows_its_guards(session: ReviewSession) -> None:
    app = make_app(session, initial_file="coder/history.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        view = screen.diff_view
        hunk = view.current_hunk
        assert hunk is not None and "def clear_truncated_reasoning" in hunk.text
        assert view.line_marks == {} and gutter_cell(view, 57) == " "  # nothing checked yet: no marks
        await pilot.press("b")
        await app.workers.wait_for_complete()
        await pilot.pause()
        result = screen.ledger.bites[("coder/history.py", hunk.index)]
        assert result.verdict == "broken" and len(result.guards) == 7
        # the gutter: toothless wins on line 57 (one operand no test notices), bites on 58 and 59
        assert view.line_marks[57] == ("○", "bad")
        assert view.line_marks[58] == ("●", "good") and view.line_marks[59] == ("●", "good")
        assert 60 not in view.line_marks and 50 not in view.line_marks  # `return None`, the docstring
        assert gutter_cell(view, 57) == "○" and gutter_cell(view, 58) == "●"
        # a revert that only removes a name shows its guards' verdicts, not a bare "broken"
        # (issue 31: the headline is the guard summary itself, "BROKEN" nowhere)
        assert [b.text for b in view.badges[hunk.index]][0] == "6 guards bite, 1 toothless"
        text = panel_text(app)
        assert text.startswith("6 guards bite, 1 toothless  coder/history.py")
        assert "the revert only removes a name" in text.splitlines()[1] and "BROKEN" not in text
        assert "1 broken" not in screen.file_list.entry(session.diff.file("coder/history.py"), 80).plain
        assert 'line 57: `msg.role == "assistant"` dropped from the condition — every test still passes' in text
        assert "line 59: early exit `return i` removed — bites: tests/test_trim_reasoning.py::" in text
        # jump to the toothless guard and back
        view.cursor = 0
        await pilot.press("right_curly_bracket")
        await pilot.pause()
        assert view.current_line == 57
        await pilot.press("right_curly_bracket")
        await pilot.pause()
        assert view.current_line == 57  # the only one: it stays, and says so
        # the matrix has a column per guard after its hunk (issue 16 turned the matrix: tests are rows)
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, MatrixScreen)
        header, verdicts, *_rows = app.screen.cell_text()
        assert len(header) == 1 + 1 + 7
        assert header[1].startswith("coder/history.py:") and verdicts[1] == "broken"
        assert any(h == "↳coder/history.py:57" and v == "operand toothless" for h, v in zip(header, verdicts, strict=True))
