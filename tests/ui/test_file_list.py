"""FileList: group titles are not stops, long paths keep their name, clicks and summaries."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.widgets.file_list import FileList
from tests.gitrepo import make_repo

SIZE = (140, 40)


def drawn(files: FileList) -> list[str]:
    return [files.render_line(y).text for y in range(files.size.height)]


async def test_cursor_steps_over_group_titles(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        files = app.screen.query_one(FileList)
        files.focus()
        await pilot.press("end")
        assert files.highlighted_path == files.paths[-1]
        await pilot.press("home")
        assert files.highlighted_path == files.paths[0]  # row 0 is the "Source" title
        source = [p for p in files.paths if awkward_session.diff.file(p).role == "source"]
        files.select_path(source[-1])
        await pilot.press("j")  # the next row is the "Tests (1)" title
        assert files.highlighted_path == "tests/test_calc.py"
        await pilot.press("k")
        assert files.highlighted_path == source[-1]
        await pilot.pause()
        assert app.screen.diff_view.file.path == source[-1]  # the diff follows the list


async def test_click_on_a_file_shows_it_and_a_title_does_nothing(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        files = app.screen.query_one(FileList)
        lines = drawn(files)
        y = next(i for i, text in enumerate(lines) if "tests/test_calc.py" in text)
        await pilot.click(FileList, offset=(4, y))
        await pilot.pause()
        assert files.highlighted_path == "tests/test_calc.py"
        assert app.screen.diff_view.file.path == "tests/test_calc.py"
        title = next(i for i, text in enumerate(lines) if text.strip().startswith("Other ("))
        await pilot.click(FileList, offset=(4, title))
        await pilot.pause()
        assert files.highlighted_path == "tests/test_calc.py"


async def test_long_path_loses_its_start_not_its_name_or_counts(tmp_path: Path) -> None:
    deep = "/".join(f"directory{i}" for i in range(12)) + "/the_file_name.py"
    make_repo(tmp_path / "repo", {"a.py": "x = 1\n"}, {deep: "y = 2\n"})
    app = make_app(ReviewSession.open(tmp_path / "repo", "agent/work"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        files = app.screen.query_one(FileList)
        row = next(text for text in drawn(files) if "the_file_name.py" in text)
        assert "…" in row and "directory0/" not in row
        assert "+1/−0" in row
        assert len(row.rstrip()) <= files.size.width


async def test_summary_is_drawn_on_its_row(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        files = app.screen.query_one(FileList)
        files.set_summary("pkg/calc.py", Content("2 bites"))
        await pilot.pause()
        row = next(text for text in drawn(files) if "pkg/calc.py" in text)
        assert row.rstrip().endswith("2 bites")
        assert "2&#160;bites" in app.export_screenshot()  # redrawn on screen, not only when asked
        files.set_summary("pkg/calc.py", None)
        await pilot.pause()
        row = next(text for text in drawn(files) if "pkg/calc.py" in text)
        assert "bites" not in row
