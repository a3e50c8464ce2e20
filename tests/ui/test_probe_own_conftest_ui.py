"""The probe editor shows both outcomes when the branch changes its conftest: the base's and the branch's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static, TextArea

from reviewui.core.session import ReviewSession, RunOptions
from reviewui.core.state import ReviewState
from reviewui.ui.screens.probe import ProbeScreen
from tests.core.test_probe_trusted import MUL_BASE, MUL_BRANCH, MUL_PROBE
from tests.gitrepo import make_repo
from tests.ui.test_probe_ui import SIZE, Host, text_of
from tests.project_python import pytest_command

pytestmark = pytest.mark.slow


async def test_the_branch_box_is_trusted_and_the_own_conftest_box_is_broken(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", MUL_BASE, MUL_BRANCH)
    session = ReviewSession.open(rb.root, "agent/work", run=RunOptions(test_cmd=pytest_command()))
    state = ReviewState.load(session.target.repo_dir, session.target.branch)
    app = Host(ProbeScreen(session, None, state))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ProbeScreen)
        own = screen.query_one("#outcome-branch_own", Static)
        assert own.has_class("-hidden")  # nothing run yet
        screen.query_one("#probe-editor", TextArea).text = MUL_PROBE
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "FAILED" in text_of(screen, "#outcome-branch") and "5 == 6" in text_of(screen, "#outcome-branch")
        assert "PASSED" in text_of(screen, "#outcome-base")
        assert not own.has_class("-hidden")
        assert "BROKEN" in str(own.render()) and "its own conftest" in str(own.render())
        summary = text_of(screen, "#probe-summary")
        assert "the branch broke this" in summary and "rewrites test reports" in summary
        assert "the branch fixed this" not in summary
