"""The probe editor does not fight the reviewer: the template's body is selected on open, ctrl+a selects all."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TextArea

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.screens.probe import ProbeScreen
from tests.ui.ready import review_ready


@pytest.fixture
def sample1(tmp_path: Path) -> ReviewSession:
    built = build_sample("01-trim-reasoning", tmp_path)
    return ReviewSession.open(built.repo_dir, "agent/trim-reasoning")


async def test_typing_replaces_the_template_body_and_ctrl_a_selects_everything(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(120, 40)) as pilot:
        await review_ready(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ProbeScreen)
        editor = app.screen.query_one("#probe-editor", TextArea)
        template = editor.text
        assert 'assert False, "write the probe"' in editor.selected_text
        assert "def test_probe" not in editor.selected_text and "import" not in editor.selected_text
        await pilot.press(*"    assert 1")
        await pilot.pause()
        text = editor.text
        assert "write the probe" not in text and "    assert 1" in text
        assert text.split("def test_probe")[0] == template.split("def test_probe")[0]  # imports kept
        await pilot.press("ctrl+a")
        await pilot.pause()
        assert editor.selected_text == editor.text
        await pilot.press("x")
        await pilot.pause()
        assert editor.text == "x"


async def test_a_kept_draft_opens_as_it_was_not_selected(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(120, 40)) as pilot:
        await review_ready(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        await pilot.press(*"    assert 2", "escape")
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        editor = app.screen.query_one("#probe-editor", TextArea)
        assert "    assert 2" in editor.text and editor.selected_text == ""


async def test_a_draft_that_is_still_the_template_opens_selected_too(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(120, 40)) as pilot:
        await review_ready(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("escape")  # closed untouched: its draft is the template
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        editor = app.screen.query_one("#probe-editor", TextArea)
        assert 'assert False, "write the probe"' in editor.selected_text
