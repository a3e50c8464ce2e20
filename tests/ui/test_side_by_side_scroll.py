"""The side-by-side view at 200 columns: a line longer than its half ends in a cut marker, and → / l scroll it."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.screens.help import binding_rows
from reviewui.ui.widgets.diff_view import DiffView
from tests.gitrepo import make_repo
from tests.ui.ready import review_ready

SIZE = (200, 50)
OLD = "x = " + "+".join(f"a{n:03}" for n in range(80)) + "\n"  # 400 characters
NEW = "x = " + "+".join(f"b{n:03}" for n in range(80)) + "\n"


def halves(view: DiffView, y: int) -> tuple[str, str]:
    left, _, right = view.render_line(y).text.partition("│")
    return left, right


async def open_split(tmp_path: Path, pilot) -> DiffView:
    screen = await review_ready(pilot.app, pilot)
    await pilot.press("s")
    await pilot.pause()
    view = screen.diff_view
    assert view.split
    return view


async def test_a_long_line_shows_a_cut_marker_and_scrolls_with_right(tmp_path: Path) -> None:
    make_repo(tmp_path, {"m.py": "a = 1\n" + OLD}, {"m.py": "a = 1\n" + NEW})
    app = make_app(ReviewSession.open(tmp_path, "agent/work"))
    async with app.run_test(size=SIZE) as pilot:
        view = await open_split(tmp_path, pilot)
        y = next(i for i, r in enumerate(view.rows) if r.kind == "split" and r.left and r.left.kind == "removed")
        y -= int(view.scroll_offset.y)
        left, right = halves(view, y)
        assert len(left) < 120 and left.rstrip().endswith("→") and "x = a000+a001" in left
        assert right.rstrip().endswith("→") and "x = b000+b001" in right
        short_left, short_right = halves(view, y - 1)  # `a = 1`: fits, no marker
        assert "a = 1" in short_left and "→" not in short_left + short_right

        await pilot.press("right")
        await pilot.pause()
        assert view.scroll_offset.x > 0
        moved_left, moved_right = halves(view, y)
        assert moved_left != left and "x = a000" not in moved_left
        shown = moved_left.split("-", 1)[1]  # past the gutter's sign
        assert shown.startswith("←") and "a0" in shown  # more to the left, and later names shown
        assert moved_right.split("+", 1)[1].startswith("←")
        first = int(shown.split("a", 1)[1][:3])
        assert first > 1  # a later part of the line is in view

        for _ in range(40):  # to the end: the last name shows, no marker at the right edge any more
            await pilot.press("l")
        await pilot.pause()
        end_left, end_right = halves(view, y)
        assert "a079" in end_left and not end_left.rstrip().endswith("→")
        assert "b079" in end_right

        await pilot.press("h")  # and back
        await pilot.pause()
        assert halves(view, y)[0] != end_left
        for _ in range(40):
            await pilot.press("left")
        await pilot.pause()
        assert halves(view, y) == (left, right)


async def test_the_scroll_keys_are_in_help_with_ids(tmp_path: Path) -> None:
    make_repo(tmp_path, {"m.py": OLD}, {"m.py": NEW})
    app = make_app(ReviewSession.open(tmp_path, "agent/work"))
    async with app.run_test(size=SIZE) as pilot:
        await review_ready(app, pilot)
        rows = {binding_id: (keys, what) for keys, what, binding_id in binding_rows(app.screen)}
        assert "review.scroll_right" in rows and "review.scroll_left" in rows
        assert "l" in rows["review.scroll_right"][0] or "→" in rows["review.scroll_right"][0]


async def test_the_scroll_keys_can_be_rebound_by_id(tmp_path: Path) -> None:
    from tests.ui.test_keymap import write_prefs

    write_prefs({"keymap": {"review.scroll_right": "ctrl+o"}})
    make_repo(tmp_path, {"m.py": OLD}, {"m.py": NEW})
    app = make_app(ReviewSession.open(tmp_path, "agent/work"))
    async with app.run_test(size=SIZE) as pilot:
        view = await open_split(tmp_path, pilot)
        assert not any("review.scroll_right" in n.message for n in app._notifications)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert view.scroll_offset.x > 0


async def test_the_unified_view_marks_a_cut_line_too(tmp_path: Path) -> None:
    # What the agent wrote past the right edge (here `or True`) must not pass unseen in either view.
    hidden = "ok = " + " and ".join(f"check_{n:02}(x)" for n in range(12)) + " or True\n"
    make_repo(tmp_path, {"m.py": "a = 1\n"}, {"m.py": "a = 1\n" + hidden})
    app = make_app(ReviewSession.open(tmp_path, "agent/work"))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await review_ready(app, pilot)
        view = screen.diff_view
        assert not view.split
        y = next(i for i, r in enumerate(view.rows) if r.kind == "added") - int(view.scroll_offset.y)
        line = view.render_line(y).text
        assert "ok = check_00(x)" in line and line.rstrip().endswith("→") and "or True" not in line
        short = view.render_line(y - 1).text  # `a = 1` fits: no marker
        assert "a = 1" in short and "→" not in short
        for _ in range(40):
            await pilot.press("l")
        await pilot.pause()
        moved = view.render_line(y).text
        assert "or True" in moved and not moved.rstrip().endswith("→")
        assert moved.split("+", 1)[1].lstrip().startswith("←")  # more to the left
