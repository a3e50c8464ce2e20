"""The findings list: a demo sample opened with `F` pressed, and the list's lines as drawn."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

from textual.widgets import OptionList

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from tests.ui.ready import review_ready


@asynccontextmanager
async def findings_open(tmp_path: Path, sample: str, branch: str, size: tuple[int, int]) -> AsyncIterator[Any]:
    """The app on demo `sample` (its agent branch `branch`) at terminal `size`, `F` pressed."""
    built = build_sample(sample, tmp_path)
    app = make_app(ReviewSession.open(built.repo_dir, branch))
    async with app.run_test(size=size) as pilot:
        await review_ready(app, pilot)
        await app.workers.wait_for_complete()
        await pilot.press("F")
        await pilot.pause()
        yield app


def drawn_findings(app: Any) -> list[str]:
    """Each line of the findings list on the app's screen, as drawn."""
    options = app.screen.query_one("#findings-list", OptionList)
    return [options.render_line(y).text for y in range(options.size.height)]
