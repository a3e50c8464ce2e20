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


def test_matrix_screen_tests_by_hunks(snap_compare, sample1: ReviewSession) -> None:
    from reviewui.ui.screens.matrix import MatrixHunk, MatrixScreen

    app = make_app(sample1, initial_file="coder/history.py", theme="reviewui-dark")
    hunks = [MatrixHunk(f"k{i}", f"coder/module_{i}.py:{10 * i + 1}", v)
             for i, v in enumerate(["bites", "toothless", "bites", "uncovered", "bites", "broken", "bites", "toothless"])]
    tests = [f"tests/test_history.py::test_case_{i}" for i in range(5)] + ["tests/test_p.py::test_param[1-a]"]
    bit = {("k0", tests[0]), ("k2", tests[1]), ("k4", tests[5]), ("k6", tests[0])}

    async def run_before(pilot) -> None:
        await settle(pilot)
        app.push_screen(MatrixScreen(hunks, tests, bit))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 24), run_before=run_before)
