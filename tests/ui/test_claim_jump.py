"""A claim finding names its turn: enter on it in the findings list shows that turn of the transcript."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import ContentSwitcher

from reviewui.ui.app import make_app
from tests.ui.claim_sessions import claim_without_run
from reviewui.ui.screens.findings import FindingsScreen
from reviewui.ui.widgets.transcript_view import TranscriptView
from tests.ui.ready import review_ready


async def test_enter_on_a_claim_finding_shows_its_turn(tmp_path: Path) -> None:
    session = claim_without_run(tmp_path)
    app = make_app(session)
    async with app.run_test(size=(180, 45)) as pilot:
        await review_ready(app, pilot)
        kinds = [f.kind for f in session.evidence.findings]
        assert "claim-without-run" in kinds
        await pilot.press("F")
        await pilot.pause()
        findings = app.screen
        assert isinstance(findings, FindingsScreen)
        n = next(i for i, f in enumerate(findings.findings) if f.kind == "claim-without-run")
        findings.query_one("#findings-list").highlighted = n
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        review = app.screen
        assert review.query_one("#main-switch", ContentSwitcher).current == "transcript-pane"
        view = review.query_one(TranscriptView)
        assert view.current_turn is not None and view.current_turn.index == 4
