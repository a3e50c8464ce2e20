"""A few SVG snapshots of the main screen at a fixed size and theme (layout regressions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from tests.ui.ready import review_ready

SIZE = (150, 36)

@pytest.fixture
def sample1(tmp_path: Path) -> ReviewSession:
    built = build_sample("01-trim-reasoning", tmp_path)
    return ReviewSession.open(built.repo_dir, "agent/trim-reasoning")


async def settle(pilot) -> None:
    await review_ready(pilot.app, pilot)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_review_screen_unified(snap_compare, sample1: ReviewSession) -> None:
    app = make_app(sample1, initial_file="coder/history.py", theme="reviewui-dark")
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


def test_review_screen_side_by_side_with_fixtures(snap_compare, sample1: ReviewSession) -> None:
    app = make_app(sample1, initial_file="tests/test_trim_reasoning.py", theme="reviewui-light")

    async def run_before(pilot) -> None:
        await pilot.press("s", "f")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
