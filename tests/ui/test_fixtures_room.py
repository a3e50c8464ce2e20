"""The fixtures pane leaves the diff room to read: walked at 80x24, `f` left the diff 12 columns
(line numbers only) beside the file list; now the file list gives way until the pane closes."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.screens.review_navigation import NavigationPart
from tests.ui.ready import review_ready


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample("01-trim-reasoning", tmp_path_factory.mktemp("fixtures-room")).repo_dir


@pytest.mark.parametrize(("size", "list_stays"), [((80, 24), False), ((200, 50), True)], ids=["80x24", "200x50"])
async def test_the_diff_keeps_room_beside_the_fixtures_pane(story: Path, size: tuple[int, int],
                                                            list_stays: bool) -> None:
    app = make_app(ReviewSession.open(story, "agent/trim-reasoning"))
    async with app.run_test(size=size) as pilot:
        screen = await review_ready(app, pilot)
        sidebar = screen.query_one("#sidebar")
        assert sidebar.display
        await pilot.press("f")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.query_one("#fixtures").display
        assert screen.diff_view.size.width >= NavigationPart.MIN_DIFF, screen.diff_view.size
        assert sidebar.display is list_stays
        assert "def clear_truncated_reasoning" in "".join(
            screen.diff_view.render_line(y).text for y in range(screen.diff_view.size.height))
        await pilot.press("f")  # the pane closes: the file list is back
        await pilot.pause()
        assert sidebar.display and not screen.query_one("#fixtures").display
