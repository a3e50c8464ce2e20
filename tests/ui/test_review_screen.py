"""The review screen driven through Pilot: keys pressed, what is shown asserted."""

from __future__ import annotations

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.screens.review import ReviewScreen
from reviewui.ui.widgets.diff_view import DiffView
from tests.awkward import MARKUP
from tests.gitrepo import make_repo

SIZE = (140, 40)


def _lines(app) -> str:
    view = app.screen.query_one(DiffView)
    return "\n".join(view.render_line(y).text for y in range(view.size.height))


async def test_opens_on_first_file_and_n_crosses_file_boundary(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        view = screen.diff_view
        first = screen.file_list.paths[0]
        assert view.file is not None and view.file.path == first
        assert len(view.file.hunks) == 1
        await pilot.press("n")
        await pilot.pause()
        assert view.file.path == screen.file_list.paths[1]
        assert view.current_hunk_index == 0
        await pilot.press("p")
        await pilot.pause()
        assert view.file.path == first


async def test_markup_and_escapes_shown_literally(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session, initial_file="pkg/markup.py")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = _lines(app)
        assert "print('[bold red]x[/bold red]')" in text
        assert "\x1b" not in text
        assert "␛[31mred␛[0m" in text
        assert MARKUP.splitlines()[0] in text


async def test_files_grouped_and_binary_note(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session, initial_file="data/logo.bin")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "binary file: 1,024 bytes → 2,048 bytes" in _lines(app)
        groups = app.screen.file_list.group_titles()
        assert groups == ["Source (7)", "Tests (1)", "Other (4)"]


async def test_every_file_can_be_viewed(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        seen = []
        for _ in range(len(screen.file_list.paths)):
            await pilot.pause()
            seen.append(screen.diff_view.file.path)
            assert _lines(app).strip(), f"{seen[-1]} drew nothing"
            await pilot.press("right_square_bracket")
        assert seen == screen.file_list.paths


async def test_side_by_side_toggle_keeps_hunk(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session, initial_file="tests/test_calc.py")
    async with app.run_test(size=SIZE) as pilot:
        view = app.screen.diff_view
        await pilot.press("s")
        await pilot.pause()
        assert view.split
        text = _lines(app)
        assert "│" in text and "def test_none():" in text
        assert view.current_hunk_index == 0
        await pilot.press("s")
        assert not view.split


async def test_word_level_highlight_marks_only_changed_word(tmp_path) -> None:
    make_repo(tmp_path, {"a.py": "total = price * count\n"}, {"a.py": "total = price * amount\n"})
    app = make_app(ReviewSession.open(tmp_path, "agent/work"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = app.screen.diff_view
        word = view.get_component_rich_style("diff--word-added").bgcolor
        y = next(i for i, r in enumerate(view.rows) if r.kind == "added")
        strip = view.render_line(y)
        marked = "".join(s.text for s in strip if s.style and s.style.bgcolor == word)
        assert marked == "amount"


async def test_help_lists_every_screen_binding(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        from textual.widgets import Static

        text = str(app.screen.query_one("#help-text", Static).render())
        for key in ("n", "p", "]", "[", "s", "?", "q"):
            assert f"  {key}  " in text or f"{key}  " in text
        assert "Next hunk, across files" in text
        await pilot.press("escape")
        assert isinstance(app.screen, ReviewScreen)


async def test_no_changes_screen(tmp_path) -> None:
    make_repo(tmp_path, {"a.py": "1\n"}, {})
    app = make_app(ReviewSession.open(tmp_path, "main"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        from textual.widgets import Static

        msg = str(app.screen.query_one("#message", Static).render())
        assert "No changes" in msg and "no commits beyond its base" in msg


async def test_badges_stay_visible_before_a_long_section_line(tmp_path) -> None:
    long_def = "def " + "a_very_long_function_name_" * 6 + "(x):\n"
    base = long_def + "".join(f"    y{i} = {i}\n" for i in range(10)) + "    return x\n"
    make_repo(tmp_path, {"m.py": base}, {"m.py": base.replace("    return x\n", "    return x + 1\n")})
    app = make_app(ReviewSession.open(tmp_path, "agent/work"))
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.press("space")
        await pilot.pause()
        header = app.screen.diff_view.render_line(0).text
        assert header.startswith(" @@ -9,4 +9,4 @@ ")
        assert "✓ reviewed" in header and "a_very_long" in header


async def test_long_line_scrolls_horizontally_with_the_gutter_fixed(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session, initial_file="pkg/long.py")
    async with app.run_test(size=SIZE) as pilot:
        view = app.screen.diff_view
        await pilot.pause()
        assert view.virtual_size.width > 10_000
        row = next(y for y, r in enumerate(view.rows) if r.kind == "added")
        start = view.render_line(row).text
        assert start.rstrip().endswith("y→") and "x = 'yyy" in start  # cut at the edge, and marked so
        view.scroll_to(x=view.max_scroll_x, animate=False, immediate=True)
        await pilot.pause()
        moved = view.render_line(row).text
        assert moved.startswith("          1 + ")  # the gutter stays put
        code = moved[len("          1 + "):].rstrip()
        # the end of the 10,000-character line, marked as scrolled (more to the left)
        assert code.endswith("yy'") and code.startswith("←") and set(code[1:-1]) == {"y"}


async def test_side_panes_are_mounted_on_first_use(awkward_session: ReviewSession, monkeypatch) -> None:
    """The results and fixtures panes are not on the first screen; their keys bring them up working."""
    import threading

    from reviewui.ui.widgets.fixtures_pane import FixturesPane
    from reviewui.ui.widgets.results_panel import ResultsPanel

    analysed = threading.Event()
    real_fixtures = awkward_session.fixtures

    def slow_fixtures():
        analysed.wait(10)
        return real_fixtures()

    monkeypatch.setattr(awkward_session, "fixtures", slow_fixtures)
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert not screen.query(ResultsPanel) and not screen.query(FixturesPane)
        await pilot.press("r")
        await pilot.pause()
        panel = screen.query_one(ResultsPanel)
        assert panel.display and "No bite-check for this hunk yet" in str(panel.query_one("#results-text").render())
        await pilot.press("f")
        await pilot.pause()
        pane = screen.query_one(FixturesPane)
        try:
            title = str(pane.query_one("#fixtures-title").render())
        finally:
            analysed.set()
        assert "analysing the tests" in title  # said while the worker runs, on a pane mounted just now
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert pane.display and not pane.has_class("-hidden")
        await pilot.press("f")
        await pilot.pause()
        assert len(screen.query(FixturesPane)) == 1 and not pane.display
