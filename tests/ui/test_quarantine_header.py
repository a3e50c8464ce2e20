"""The header says how many tests red at the head a bite-check quarantined (issue 32)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.widgets.review_header import ReviewHeader
from tests.core.bite.helpers import use_venv_python
from tests.core.bite.test_quarantine import BASE, BRANCH
from tests.gitrepo import make_repo
from tests.ui.ready import review_ready

SIZE = (160, 40)


async def test_the_header_names_the_quarantined_tests_after_a_sweep(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    rb = make_repo(tmp_path / "r", BASE, BRANCH)
    app = make_app(ReviewSession.open(rb.root, "agent/work"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        header = screen.query_one(ReviewHeader)
        assert header.quarantined == 0 and "quarantined" not in str(header.render())
        await pilot.press("B")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert header.quarantined == 1
        assert "1 red at head, quarantined" in str(header.render())
