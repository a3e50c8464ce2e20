"""`/` in the diff: matches across files, `n`/`N` through them while the search is active, highlighted, escape clears."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import Static

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.screens.review import ReviewScreen
from reviewui.ui.screens.text_prompt import TextPromptModal
from reviewui.ui.widgets.key_footer import KeyFooter
from tests.ui.ready import review_ready

SIZE = (160, 40)


@pytest.fixture
def sample1(tmp_path: Path) -> ReviewSession:
    built = build_sample("01-trim-reasoning", tmp_path)
    return ReviewSession.open(built.repo_dir, "agent/trim-reasoning")


def occurrences(session: ReviewSession, word: str) -> dict[str, int]:
    """Matches per file, counted straight from the diff's lines."""
    out: dict[str, int] = {}
    for f in session.diff.files:
        n = sum(len(re.findall(re.escape(word), line.text, re.IGNORECASE)) for h in f.hunks for line in h.lines)
        if n:
            out[f.path] = n
    return out


def cursor_text(screen: ReviewScreen) -> str:
    view = screen.diff_view
    return view.render_line(view.cursor - int(view.scroll_offset.y)).text


def footer(screen: ReviewScreen) -> str:
    return screen.query_one(KeyFooter).render_line(0).text


async def search(pilot, app, text: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("slash")
    await pilot.pause()
    assert isinstance(app.screen, TextPromptModal)
    await pilot.press(*text, "enter")
    await pilot.pause()


async def test_search_finds_across_files_and_n_N_step_through_matches(sample1: ReviewSession) -> None:
    per_file = occurrences(sample1, "Reasoning")
    assert len(per_file) >= 2  # the story's source and its test both say it
    total = sum(per_file.values())
    app = make_app(sample1)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        first_file = screen.diff_view.file.path
        await search(pilot, app, "reasoning")
        assert isinstance(app.screen, ReviewScreen)
        status = str(screen.query_one("#status", Static).render())
        assert f"match 1 of {total} in {len(per_file)} file" in status
        assert f"in {len(per_file)} files —" in status  # counted in words (two or more files here)
        assert "reasoning" in cursor_text(screen).lower()
        assert "n Next match" in footer(screen) and "Next hunk" not in footer(screen)
        seen_files = {screen.diff_view.file.path}
        lines = set()
        for _ in range(total):
            await pilot.press("n")
            await pilot.pause()
            assert "reasoning" in cursor_text(screen).lower()
            seen_files.add(screen.diff_view.file.path)
            lines.add((screen.diff_view.file.path, screen.diff_view.cursor))
        assert seen_files == set(per_file)  # across files
        assert screen.search.current == 0  # total steps from the first match wrap around to it
        assert screen.diff_view.file.path == first_file or first_file not in per_file
        await pilot.press("N")
        await pilot.pause()
        assert screen.search.current == total - 1
        assert f"match {total} of {total}" in str(screen.query_one("#status", Static).render())


async def test_matches_are_highlighted_in_both_views_and_escape_clears(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        await search(pilot, app, "msg.role")
        view = screen.diff_view
        match_bg = view.get_component_rich_style("diff--match").bgcolor

        def highlighted() -> list[str]:
            # the row as drawn before the cursor's own background goes over it
            strip = view._render_row(view.rows[view.cursor], view._content_width(), int(view.scroll_offset.x))
            return [seg.text for seg in strip if seg.style is not None and seg.style.bgcolor == match_bg]

        assert "".join(highlighted()).lower() == "msg.role"
        await pilot.press("s")  # side by side: still highlighted where the match is
        await pilot.pause()
        await pilot.press("n", "N")
        await pilot.pause()
        assert view.split and "msg.role" in "".join(highlighted()).lower()
        await pilot.press("escape")
        await pilot.pause()
        assert screen.search.query == "" and highlighted() == []
        assert "Next hunk" in footer(screen) and "Next match" not in footer(screen)
        hunk = view.current_hunk_index
        await pilot.press("p", "n")  # n moves by hunk again
        await pilot.pause()
        assert view.current_hunk_index == hunk


async def test_a_search_without_match_says_so_and_keeps_n_for_hunks_in_help(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        await search(pilot, app, "no-such-text-anywhere")
        assert "no match" in str(screen.query_one("#status", Static).render())
        assert screen.search.matches == []
        await pilot.press("question_mark")
        await pilot.pause()
        text = str(app.screen.query_one("#help-text", Static).render())
        review = text.split("\nReview\n", 1)[1].split("\n\n", 1)[0]
        assert "Next hunk" in review and "Next match of the search" in review and "Search the diff" in review


async def test_clearing_a_search_brings_back_the_status_it_covered(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        screen.set_status("bite-check done: 1 bite")
        await search(pilot, app, "reasoning")
        assert "match 1 of" in str(screen.query_one("#status", Static).render())
        await pilot.press("escape")
        await pilot.pause()
        assert str(screen.query_one("#status", Static).render()) == "bite-check done: 1 bite"
