"""`?` in every view and dialog, the queue app's too, opening help at the keys of the view in front.

Walked at 60x15 and 80x24: before, `?` did nothing in the queue app (its footer
offered it), in Findings, History, the matrix and the truth table, and help always
opened at the top. Where a text field has the focus `?` is a character, and `f1`
(shown in that dialog's footer) opens help.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.containers import VerticalScroll
from textual.widgets import Input, Static

from reviewui.core.queue.read import QueueSource
from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.queue_app import QueueApp
from reviewui.ui.screens.help import HelpScreen
from reviewui.ui.screens.queue import QueueScreen
from reviewui.ui.widgets.key_footer import KeyFooter, ModalFooter
from tests.gitrepo import RepoBuilder
from tests.ui.ready import review_ready

SIZES = [(60, 15), (80, 24)]

# (key that opens the view from the review screen, the view's name in help, the key that opens help there)
VIEWS = [
    (None, "Review", "question_mark"),
    ("t", "Transcript", "question_mark"),
    ("m", "Matrix", "question_mark"),
    ("F", "Findings", "question_mark"),
    ("v", "History", "question_mark"),
    ("u", "Truth table", "question_mark"),
    ("a", "Verdict dialog", "f1"),
    ("c", "Comment prompt", "f1"),
    ("e", "Probe editor", "f1"),
]


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample("01-trim-reasoning", tmp_path_factory.mktemp("help")).repo_dir


def help_at(app: object) -> tuple[HelpScreen, str, range]:
    """The help in front, the line its section title starts at, and the lines in view."""
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, HelpScreen), screen
    text = screen.query_one("#help-text", Static)
    scroll = screen.query_one(VerticalScroll)
    assert screen.section is not None
    y = screen.section_line(screen.section)
    assert y is not None
    shown = range(int(scroll.scroll_y), int(scroll.scroll_y) + scroll.scrollable_content_region.height)
    return screen, text.render_line(y).text.strip(), shown


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_help_opens_at_the_view_in_front_everywhere(sample_dir: Path, size: tuple[int, int]) -> None:
    app = make_app(ReviewSession.open(sample_dir, "agent/trim-reasoning"))
    async with app.run_test(size=size) as pilot:
        review = await review_ready(app, pilot)
        await app.workers.wait_for_complete()
        for key, view, help_key in VIEWS:
            if key is not None:
                await pilot.press(key)
                await app.workers.wait_for_complete()
                await pilot.pause()
            under = app.screen
            footer = under.query(ModalFooter).first() if under.query(ModalFooter) else under.query_one(KeyFooter)
            shown_key = "f1" if help_key == "f1" else "?"
            assert f"{shown_key} Help" in footer.render_line(0).text, (view, footer.render_line(0).text)
            await pilot.press(help_key)
            await pilot.pause()
            helped, title, in_view = help_at(app)
            assert helped.section == view and title == view, (view, helped.section, title)
            y = helped.section_line(view)
            assert y in in_view, (view, y, in_view)  # the section's title is on screen, not the top of help
            if view != "Review":
                assert y > 10  # the review's keys come first: this one was scrolled to
            await pilot.press("question_mark")  # `?` closes help again, back where it was
            await pilot.pause()
            assert app.screen is under, view
            if key not in (None, "t"):
                await pilot.press("escape")
                await pilot.pause()
                if isinstance(app.screen, HelpScreen):  # pragma: no cover - a failure's clean-up
                    await pilot.press("escape")
            if key == "t":
                await pilot.press("t")  # back to the diff
                await pilot.pause()
            assert app.screen is review, view


async def test_question_mark_in_a_text_field_is_a_character(sample_dir: Path) -> None:
    app = make_app(ReviewSession.open(sample_dir, "agent/trim-reasoning"))
    async with app.run_test(size=(80, 24)) as pilot:
        await review_ready(app, pilot)
        await pilot.press("x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press(*"why?")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)
        assert app.screen.query_one("#reason", Input).value == "why?"


@pytest.fixture
def queue_repo(tmp_path: Path) -> RepoBuilder:
    rb = RepoBuilder(tmp_path / "r")
    rb.commit({"calc.py": "def add(a, b):\n    return a + b\n"}, "base")
    rb.branch("agent/one")
    rb.commit({"one.py": "X = 1\n"}, "agent: one")
    rb.checkout("main")
    return rb


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_help_in_the_queue_app_opens_at_the_queue(queue_repo: RepoBuilder, size: tuple[int, int]) -> None:
    app = QueueApp(QueueSource(queue_repo.root, "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", ()),
                   sweep=False)
    async with app.run_test(size=size) as pilot:
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await asyncio.wait_for(queue.loaded.wait(), 30)
        assert "? Help" in queue.query_one(KeyFooter).render_line(0).text
        await pilot.press("question_mark")
        await pilot.pause()
        helped, title, in_view = help_at(app)
        assert helped.section == title == "Queue"
        assert helped.section_line("Queue") in in_view
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is queue
