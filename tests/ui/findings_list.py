"""The findings list as drawn: a demo sample opened, `F` pressed, the list's lines read."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.screens.findings import FindingsScreen
from tests.ui.ready import review_ready


async def drawn_findings(tmp_path: Path, sample: str, branch: str, size: tuple[int, int]) -> list[str]:
    """Each line of the findings list of demo `sample` (its agent branch `branch`) at terminal `size`."""
    built = build_sample(sample, tmp_path)
    app = make_app(ReviewSession.open(built.repo_dir, branch))
    async with app.run_test(size=size) as pilot:
        await review_ready(app, pilot)
        await app.workers.wait_for_complete()
        await pilot.press("F")
        await pilot.pause()
        assert isinstance(app.screen, FindingsScreen)
        options = app.screen.query_one("#findings-list", OptionList)
        return [options.render_line(y).text for y in range(options.size.height)]
