"""`w` on a toothless guard shows its witness; `k` keeps it as a probe; a likely equivalent one is dimmed."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.session import ReviewSession, RunOptions
from reviewui.core.witness.model import Witness
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.screens.witness import WitnessModal
from reviewui.ui.widgets import guard_marks
from reviewui.ui.widgets.results_panel import ResultsPanel
from tests.ui.ready import review_ready
from tests.project_python import pytest_command

SIZE = (160, 44)


def guard(witness: Witness | None, verdict: str = "toothless") -> GuardResult:
    return GuardResult("a.py", 0, 3, "condition", "condition `x` never true", verdict, witness=witness)


def test_a_likely_equivalent_guard_is_dimmed_and_never_a_bite() -> None:
    found = guard(Witness(True, "f(1)", "1", "2", tries=3))
    none = guard(Witness(False, tries=80))
    unsearched = guard(Witness(False, reason="no seed"))
    assert guard_marks.mark(found) == ("○", "bad") and guard_marks.mark(unsearched) == ("○", "bad")
    assert guard_marks.mark(none) == ("○", "info")  # dimmer: likely equivalent
    lines = guard_marks.guard_lines(type("R", (), {"guards": (none,)})())
    assert "none found in 80 tries (likely equivalent)" in lines[1].plain and "bites" not in lines[1].plain
    assert any(span.style == "$text-muted" for span in lines[1].spans)
    # on one line, the guard with a witness is the mark shown
    assert guard_marks.line_marks([type("R", (), {"guards": (none, found)})()], "a.py") == {3: ("○", "bad")}


@pytest.mark.slow
async def test_w_shows_the_role_guard_s_witness_and_k_keeps_it_as_a_probe(tmp_path: Path) -> None:
    repo = build_sample("01-trim-reasoning", tmp_path).repo_dir
    session = ReviewSession.open(repo, "agent/trim-reasoning", run=RunOptions(test_cmd=pytest_command()))
    app = make_app(session, initial_file="coder/history.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        assert screen.check_action("witness", ()) is False  # no sweep has looked for one: the key means nothing
        await pilot.press("b")
        await app.workers.wait_for_complete()
        await pilot.pause()
        view = screen.diff_view
        view.cursor = view.row_for_line(57)  # type: ignore[assignment]
        await pilot.pause()
        assert screen.check_action("witness", ()) is True
        panel = str(screen.query_one(ResultsPanel).query_one("#results-text", Static).render())
        assert "every test still passes; witness: `clear_truncated_reasoning([Message(" in panel
        await pilot.press("w")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, WitnessModal)
        witness = modal.witness
        assert witness.found and witness.test
        code = str(modal.query_one("#witness-code", Static).render())
        assert "def test_witness_clear_truncated_reasoning_line_57():" in code
        await pilot.press("k")
        await pilot.pause()
        assert app.screen is screen
        [probe] = screen.ledger.state.probes()
        assert probe.code == witness.test and probe.name == "test_witness_clear_truncated_reasoning_line_57"
        assert probe.outcomes == {"branch": "passed", "reverted": "failed"}  # it bites the guard
        # a line with no toothless guard: w says so and opens nothing
        view.cursor = view.row_for_line(59)  # type: ignore[assignment]
        await pilot.pause()
        await pilot.press("w")
        await pilot.pause()
        assert app.screen is screen
