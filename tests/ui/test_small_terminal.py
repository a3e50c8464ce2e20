"""A small terminal: at 60x15 the findings list still shows findings; at 80x24 the header keeps `reviewed 0/N`."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.screens.findings import FindingsScreen
from reviewui.ui.widgets.review_header import ReviewHeader
from tests.ui.ready import review_ready


@pytest.fixture
def sample1(tmp_path: Path) -> ReviewSession:
    built = build_sample("01-trim-reasoning", tmp_path)
    return ReviewSession.open(built.repo_dir, "agent/trim-reasoning")


def list_lines(screen: FindingsScreen) -> list[str]:
    """The findings list as drawn (only the rows that are on screen)."""
    options = screen.query_one("#findings-list", OptionList)
    return [options.render_line(y).text for y in range(options.size.height)]


async def test_findings_rows_are_drawn_at_60x15(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(60, 15)) as pilot:
        await review_ready(app, pilot)
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("F")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, FindingsScreen) and screen.findings
        first = screen.findings[0]
        drawn = "\n".join(list_lines(screen))
        assert first.severity in drawn and first.kind in drawn
        assert screen.query_one("#findings-list").region.height >= 3  # room for rows, not just a border
        second = screen.findings[1] if len(screen.findings) > 1 else None
        if second is not None:  # j/down moves through them, still drawn
            await pilot.press("down")
            await pilot.pause()
            assert second.kind in "\n".join(list_lines(screen))


async def test_findings_dialog_keeps_its_frame_at_80x24_and_header_its_progress(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await review_ready(app, pilot)
        line = screen.query_one(ReviewHeader).render_line(0).text
        total = screen.query_one(ReviewHeader).progress[1]
        assert total > 0 and f"reviewed 0/{total}" in line
        await app.workers.wait_for_complete()
        await pilot.press("F")
        await pilot.pause()
        findings = app.screen
        assert isinstance(findings, FindingsScreen)
        assert findings.has_class("-tall") and not findings.has_class("-short")
        assert findings.findings[0].kind in "\n".join(list_lines(findings))
