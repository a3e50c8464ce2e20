"""The fixtures pane beside the first sample's hunks: the dodging fixture is in plain sight."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.widgets.fixtures_pane import FixturesPane

SIZE = (200, 50)


@pytest.fixture
def sample1(tmp_path: Path) -> ReviewSession:
    built = build_sample("01-trim-reasoning", tmp_path)
    return ReviewSession.open(built.repo_dir, "agent/trim-reasoning")


def pane_lines(app) -> list[str]:
    lines = app.screen.query_one(FixturesPane).query_one("#fixture-lines", OptionList)
    return [o.prompt.plain for o in lines.options]


async def open_pane(app, pilot) -> None:
    await pilot.press("f")
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_test_hunk_shows_the_continuation_without_reasoning(sample1: ReviewSession) -> None:
    app = make_app(sample1, initial_file="tests/test_trim_reasoning.py")
    async with app.run_test(size=SIZE) as pilot:
        await open_pane(app, pilot)
        lines = pane_lines(app)
        text = "\n".join(lines)
        assert "tests/test_trim_reasoning.py::test_clears_reasoning_of_the_truncated_turn  added" in text
        # the data the test builds: the continuation carries a tool call and no reasoning
        continuation = [ln for ln in lines if 'Message("assistant", tool_calls=' in ln]
        assert continuation and "reasoning" not in continuation[0]
        assert any("assert cleared == 1" in ln for ln in lines)


async def test_source_hunk_lists_the_tests_that_call_it_and_expands(sample1: ReviewSession) -> None:
    app = make_app(sample1, initial_file="coder/history.py")
    async with app.run_test(size=SIZE) as pilot:
        await open_pane(app, pilot)
        lines = pane_lines(app)
        assert any("coder.history.clear_truncated_reasoning" in ln for ln in lines)
        tid = "tests/test_trim_reasoning.py::test_clears_reasoning_of_the_truncated_turn"
        assert any(ln.strip() == f"▸ {tid}" for ln in lines)
        pane = app.screen.query_one(FixturesPane)
        option_list = pane.query_one("#fixture-lines", OptionList)
        option_list.highlighted = option_list.get_option_index(f"t:{tid}")
        option_list.focus()
        await pilot.press("enter")
        await pilot.pause()
        lines = pane_lines(app)
        assert any(ln.strip() == f"▾ {tid}" for ln in lines)
        assert any("assert messages[1].reasoning ==" in ln for ln in lines)


async def test_pane_follows_the_cursor_and_f_hides_it(sample1: ReviewSession) -> None:
    app = make_app(sample1, initial_file="coder/history.py")
    async with app.run_test(size=SIZE) as pilot:
        await open_pane(app, pilot)
        title = str(app.screen.query_one("#fixtures-title", Static).render())
        assert title.startswith("Tests exercising this hunk")
        app.screen.diff_view.focus()
        await pilot.press("right_square_bracket")
        await pilot.pause()
        title = str(app.screen.query_one("#fixtures-title", Static).render())
        assert title.startswith("Tests in this hunk")
        await pilot.press("f")
        assert app.screen.query_one(FixturesPane).has_class("-hidden")


async def test_the_title_counts_the_hunks_symbols_in_words(sample1: ReviewSession) -> None:
    app = make_app(sample1, initial_file="coder/history.py")
    async with app.run_test(size=SIZE) as pilot:
        await open_pane(app, pilot)
        title = str(app.screen.query_one("#fixtures-title", Static).render())
    assert title == "Tests exercising this hunk  1 changed symbol"  # one new function: no "symbol(s)"


async def test_keyboard_in_the_pane_on_the_conftest_fixture_story(tmp_path: Path) -> None:
    built = build_sample("04-capped-backoff", tmp_path)
    session = ReviewSession.open(built.repo_dir, "agent/capped-backoff")
    app = make_app(session, initial_file="tests/test_backoff.py")
    async with app.run_test(size=SIZE) as pilot:
        await open_pane(app, pilot)
        text = "\n".join(pane_lines(app))
        assert "fixture policy  tests/conftest.py:7" in text and "parametrize attempt, expected" in text
        assert "[#6] 11, 1024.0" in text and "[#1] 0, 0.5" in text
        pane = app.screen.query_one(FixturesPane)
        option_list = pane.query_one("#fixture-lines", OptionList)
        option_list.focus()
        await pilot.pause()
        # a row is selected on focus: the fixture, the one row enter can open
        assert option_list.highlighted is not None
        assert option_list.highlighted_option.prompt.plain.strip().startswith("fixture policy")
        await pilot.press("j")
        await pilot.press("k")
        assert option_list.highlighted_option.prompt.plain.strip().startswith("fixture policy")
        await pilot.press("enter")
        await pilot.pause()
        title = str(pane.query_one("#fixtures-title", Static).render())
        assert title.startswith("fixture policy")
        assert any("max_delay=3600.0" in ln for ln in pane_lines(app))
        await pilot.press("backspace")
        await pilot.pause()
        assert str(pane.query_one("#fixtures-title", Static).render()).startswith("Tests in this hunk")


async def test_j_and_k_move_between_rows(sample1: ReviewSession) -> None:
    app = make_app(sample1, initial_file="coder/history.py")
    async with app.run_test(size=SIZE) as pilot:
        await open_pane(app, pilot)
        pane = app.screen.query_one(FixturesPane)
        option_list = pane.query_one("#fixture-lines", OptionList)
        tid = "tests/test_trim_reasoning.py::test_clears_reasoning_of_the_truncated_turn"
        option_list.focus()
        await pilot.pause()
        first = option_list.highlighted
        assert first is not None
        await pilot.press("enter")  # expand the first test: its fixtures become rows
        await pilot.pause()
        assert any(ln.strip() == f"▾ {tid}" for ln in pane_lines(app))
        here = option_list.highlighted
        await pilot.press("j")
        assert option_list.highlighted is not None and option_list.highlighted > here
        await pilot.press("k")
        assert option_list.highlighted == here


async def test_a_hunk_only_data_driven_tests_reach_counts_their_readers(tmp_path: Path) -> None:
    # issue 32: not "no test calls this" in error red when a changed case file feeds a test.
    from tests.core.fixtures.test_data_reads import CASES_TEST, PARSER
    from tests.gitrepo import make_repo

    rb = make_repo(tmp_path / "r",
                   {"pkg/__init__.py": "", "pkg/parser.py": PARSER, "tests/test_cases.py": CASES_TEST,
                    "tests/cases/a.json": '{"in": "a,b", "out": ["a", "b"]}\n'},
                   {"pkg/parser.py": PARSER.replace("text.split(',')", "[t.strip() for t in text.split(',')]"),
                    "tests/cases/b.json": '{"in": "a, b", "out": ["a", "b"]}\n'})
    app = make_app(ReviewSession.open(rb.root, "agent/work"), initial_file="pkg/parser.py")
    async with app.run_test(size=SIZE) as pilot:
        await open_pane(app, pilot)
        text = "\n".join(pane_lines(app))
        assert "pkg.parser.parse" in text
        assert "no added or changed test calls this; 1 test read changed data files" in text
        assert "⚠" not in text
