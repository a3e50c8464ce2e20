"""The file list is as wide as its entries need (within limits), `L` widens or hides it, badges lose whole pieces."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.screens.review_navigation import NavigationPart
from tests.gitrepo import make_repo
from tests.ui.ready import review_ready


def one_file(tmp_path: Path) -> ReviewSession:
    make_repo(tmp_path / "r", {"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    return ReviewSession.open(tmp_path / "r", "agent/work")


LONG = "src/" + "very_long_directory_name/" * 4 + "module.py"


def long_path(tmp_path: Path) -> ReviewSession:
    """One changed file whose entry wants more room than any list gets."""
    make_repo(tmp_path / "r", {LONG: "x = 1\n"}, {LONG: "x = 2\n"})
    return ReviewSession.open(tmp_path / "r", "agent/work")


async def test_one_file_diff_gets_a_narrow_list_and_L_widens_hides_and_fits_it(tmp_path: Path) -> None:
    app = make_app(one_file(tmp_path))
    async with app.run_test(size=(200, 40)) as pilot:
        screen = await review_ready(app, pilot)
        sidebar = screen.query_one("#sidebar")
        fitted = sidebar.outer_size.width
        assert 20 <= fitted <= 24  # " M a.py +1/−1": the minimum, not a quarter of the screen
        assert screen.diff_view.size.width > 170
        await pilot.press("L")
        await pilot.pause()
        assert sidebar.outer_size.width >= 100  # wide: half the screen
        await pilot.press("L")
        await pilot.pause()
        assert not sidebar.display and screen.diff_view.size.width >= 198
        await pilot.press("L")
        await pilot.pause()
        assert sidebar.display and sidebar.outer_size.width == fitted


async def test_on_a_narrow_screen_L_widens_the_list_as_far_as_the_diff_allows(tmp_path: Path) -> None:
    # Seen in the browser at 800x500 (88 columns): the wide list took 70 % and so left the diff
    # under its minimum, and the list hid itself: `L` seemed to close it instead of widening it.
    app = make_app(long_path(tmp_path))
    async with app.run_test(size=(88, 27)) as pilot:
        screen = await review_ready(app, pilot)
        sidebar = screen.query_one("#sidebar")
        fitted = sidebar.outer_size.width
        await pilot.press("L")
        await pilot.pause()
        assert sidebar.display and sidebar.outer_size.width > fitted
        assert screen.diff_view.size.width >= NavigationPart.MIN_DIFF, screen.diff_view.size


async def test_the_list_stays_while_20_cells_and_the_diff_s_40_fit(tmp_path: Path) -> None:
    app = make_app(one_file(tmp_path))
    async with app.run_test(size=(60, 20)) as pilot:  # 60 = 20 for the list + MIN_DIFF
        screen = await review_ready(app, pilot)
        sidebar = screen.query_one("#sidebar")
        assert sidebar.display and sidebar.outer_size.width == 20
        assert screen.diff_view.size.width >= NavigationPart.MIN_DIFF, screen.diff_view.size
    async with make_app(one_file(tmp_path / "narrower")).run_test(size=(59, 20)) as pilot:
        screen = await review_ready(pilot.app, pilot)
        assert not screen.query_one("#sidebar").display  # one column less: the list gives way


async def test_a_long_path_and_summary_fit_within_limits_and_lose_whole_pieces(tmp_path: Path) -> None:
    long = LONG
    app = make_app(long_path(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await review_ready(app, pilot)
        sidebar = screen.query_one("#sidebar")
        assert sidebar.outer_size.width == 40  # at most 40 % of the screen
        files = screen.file_list
        f = screen.session.diff.file(long)
        summary = Content.assemble(("1 toothless ", "$error"), ("15 uncovered ", "$warning"), ("⚑3 ", "$error"),
                                   ("✓1/2", "$success"))
        files.set_summary(long, summary)
        wide = files.entry(f, 200).plain
        assert wide.endswith("1 toothless 15 uncovered ⚑3 ✓1/2")
        narrow = files.entry(f, 40).plain
        # the path keeps its name, the counts stay, the summary keeps the whole pieces that fit and says more is left
        assert narrow == " M …y_name/module.py +1/−1 1 toothless …"
        assert len(files.entry(f, 30).plain) <= 30 and "toothless" not in files.entry(f, 30).plain.replace(
            "1 toothless", "")  # narrower: the piece goes whole, never "1 tooth"


def test_the_wanted_width_counts_each_entry_s_summary(tmp_path: Path) -> None:
    # The entries' own widths are worked out once (the sidebar is fitted on every resize); a
    # summary that arrives later (findings, bites) still widens what the list wants.
    from reviewui.ui.widgets.file_list import FileList

    files = FileList(one_file(tmp_path).diff)
    bare = files.wanted_width()
    files.summaries[files.diff.files[0].path] = Content("⚑3 ●7 bites ○2 toothless")
    assert files.wanted_width() == bare + 1 + Content("⚑3 ●7 bites ○2 toothless").cell_length
