"""Help everywhere: `?` in the footer at every width, help listing every view's keys unopened, dialog footers."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
from textual.dom import DOMNode
from textual.widgets import Static

import reviewui.ui
from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.help_registry import VIEWS, help_views, view_class
from reviewui.ui.screens.help import HelpScreen
from reviewui.ui.widgets.key_footer import KeyFooter, ModalFooter
from tests.ui.ready import review_ready


@pytest.fixture
def sample1(tmp_path: Path) -> ReviewSession:
    built = build_sample("01-trim-reasoning", tmp_path)
    return ReviewSession.open(built.repo_dir, "agent/trim-reasoning")


@pytest.mark.parametrize("width", [60, 80, 200])
async def test_help_key_is_in_the_footer_at_every_width(sample1: ReviewSession, width: int) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(width, 24)) as pilot:
        await review_ready(app, pilot)
        line = app.screen.query_one(KeyFooter).render_line(0).text
        assert "? Help" in line, line
        assert "n Next hunk" in line  # other keys still come first, as many as fit
        if width < 100:
            assert "Findings" not in line  # the keys that give way are the others, not help
        await pilot.press("t")  # the transcript in front: help is still there
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "? Help" in app.screen.query_one(KeyFooter).render_line(0).text


async def test_help_lists_every_view_and_dialog_without_opening_them(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(120, 50)) as pilot:
        await review_ready(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text", Static).render())
        sections = {part.split("\n", 1)[0]: part for part in text.split("\n\n")}
        for view, key, what in [
            ("Matrix", "esc", "Close"),
            ("Findings", "T", "Apply the branch's own reviewui config"),
            ("History", "esc", "Close"),
            ("Verdict dialog", "^y", "Approve although"),
            ("Probe editor", "^r", "Run the probe"),
            ("Probe editor", "^a", "Select the whole probe"),
            ("Transcript", "z", "reasoning"),
            ("Fixtures pane", "⏎", "definition"),
            ("Review", "/", "Search the diff"),
        ]:
            assert view in sections, (view, list(sections))
            assert key in sections[view] and what in sections[view], (view, key, sections[view])
        assert isinstance(app.screen.query_one(ModalFooter), ModalFooter)  # help has its own footer too
        assert "Close help" in app.screen.query_one(ModalFooter).render_line(0).text


def test_every_view_with_keys_is_registered() -> None:
    """A screen or widget of reviewui with its own BINDINGS that help does not list fails here."""
    registered = {where for _, where in VIEWS}
    views = [view_class(where) for where in registered]
    missing: list[str] = []
    for info in pkgutil.walk_packages(reviewui.ui.__path__, "reviewui.ui."):
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or not issubclass(cls, DOMNode):
                continue
            if any(issubclass(v, cls) for v in views):
                continue  # registered, or a base whose keys its registered subclasses list
            if "BINDINGS" in cls.__dict__ and cls.__dict__["BINDINGS"]:
                missing.append(f"{cls.__module__}:{name}")
    assert missing == []


async def test_every_dialog_has_a_footer_of_its_own(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(100, 30)) as pilot:
        await review_ready(app, pilot)
        for key, expected in [("m", "Close"), ("F", "Close"), ("v", "Close"), ("a", "Record"), ("c", "Save")]:
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause()
            footer = app.screen.query_one(ModalFooter)
            assert expected in footer.render_line(0).text, (key, footer.render_line(0).text)
            await pilot.press("escape")
            await pilot.pause()


async def test_help_rows_follow_the_keymap(sample1: ReviewSession, monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(120, 40)) as pilot:
        await review_ready(app, pilot)
        app.set_keymap({"probe.run": "f5"})
        probe = dict(help_views(app))["Probe editor"]
        assert any(k.id == "probe.run" and k.keys == "f5" for k in probe)
