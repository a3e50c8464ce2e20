"""`?` help: keys grouped by the view they act in, none twice in a view, and the README's table is true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import Static

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.screens.help import HelpScreen, help_groups

README = Path(__file__).resolve().parents[2] / "README.md"
KEY_NAMES = {"escape": "esc", "space": "space", "tab": "tab", "?": "?"}


@pytest.fixture
def sample1(tmp_path: Path) -> ReviewSession:
    built = build_sample("01-trim-reasoning", tmp_path)
    return ReviewSession.open(built.repo_dir, "agent/trim-reasoning")


def readme_keys() -> list[str]:
    """Every key named in the first column of the README's key table."""
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| key | does |"):].split("\n\n", 1)[0]
    keys: list[str] = []
    for row in table.splitlines()[2:]:
        first = row.split("|")[1]
        keys += [k for k in re.findall(r"`([^`]+)`", first) if k not in ("j", "k")]  # j/k are the list's
    return keys


async def test_help_groups_keys_by_view_without_duplicates(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("f")
        await app.workers.wait_for_complete()
        await pilot.pause()
        groups = dict(help_groups(app.screen))
        assert list(groups)[:2] == ["Anywhere", "Review"]
        assert "Fixtures pane" in groups
        for view, rows in groups.items():
            keys = [k.strip() for key, _ in rows for k in key.split(",")]
            assert len(keys) == len(set(keys)), (view, keys)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text", Static).render())
        assert "\nReview\n" in text and "\nFixtures pane\n" in text
        # the same key in two views (enter in the fixtures pane, say) is never two rows of one list
        review_part = text.split("\nReview\n", 1)[1].split("\n\n", 1)[0]
        assert review_part.count("  Help") == 1


async def test_transcript_keys_are_their_own_group(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("t")
        await app.workers.wait_for_complete()
        await pilot.pause()
        groups = dict(help_groups(app.screen))
        transcript = dict(groups["Transcript"])
        assert "z" in transcript and "/" in transcript
        # the review screen's own `/` is the diff's search (issue 31), never the transcript's
        assert dict(groups["Review"])["/"].startswith("Search the diff") and not transcript["/"].startswith("Search the diff")
        await pilot.press("t")  # back to the diff: the hidden transcript's keys are not offered
        await pilot.pause()
        assert "Transcript" not in dict(help_groups(app.screen))


async def test_every_key_in_the_readme_table_is_bound(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        bound = {k.strip() for _, rows in help_groups(app.screen) for key, _ in rows for k in key.split(",")}
        bound |= {"↑", "↓", "pgup", "pgdn"}
        for key in readme_keys():
            shown = KEY_NAMES.get(key, key)
            if key in ("arrows", "pgup", "pgdn"):
                continue
            assert shown in bound, key


async def test_a_key_whose_text_wraps_goes_on_under_its_text_not_under_the_keys(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(80, 50)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.query_one("#help-text", Static)
        lines = [box.render_line(y).text.rstrip() for y in range(box.size.height)]
    row = next(n for n, line in enumerate(lines) if "n  Next match of the search" in line)
    assert lines[row].startswith(" " * 11 + "n  Next match")  # the key right-aligned in its 12 cells
    rest = lines[row + 1]
    assert rest.startswith(" " * 14) and rest[14] != " ", rest  # under the text, clear of the key column
    assert "review.next_match" in " ".join(lines[row:row + 3])  # the binding's id ends its text
