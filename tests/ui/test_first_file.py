"""What `reviewui open` reads before the first screen is what that screen shows.

Beside the UI's import, `open` reads and parses the patch of the file the review screen shows
first (cli._read_first_file): `Diff.first_listed` must name the file the list highlights, or the
work is wasted and the screen waits on its own git call. The sidebar is fitted to every entry's
width before the first paint, from widths counted without building each entry (`_counts_width`).
"""

from __future__ import annotations

from pathlib import Path

from reviewui.cli import _read_first_file
from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.widgets.file_list import FileList, _counts_width
from tests.gitrepo import make_repo
from tests.ui.ready import review_ready


async def test_the_first_listed_file_is_the_one_the_review_shows_first(awkward_session: ReviewSession) -> None:
    first = awkward_session.diff.first_listed()
    assert first is not None
    # git's order starts with a binary file of the `other` group: the list starts with its sources
    assert awkward_session.diff.files[0].path != first.path
    app = make_app(awkward_session)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await review_ready(app, pilot)
        assert screen.file_list.highlighted_path == first.path
        assert screen.diff_view.file is not None and screen.diff_view.file.path == first.path


def test_open_reads_the_first_file_s_patch_before_the_screen_asks(awkward_session: ReviewSession) -> None:
    first = awkward_session.diff.first_listed()
    assert first is not None and "hunks" not in vars(first)
    _read_first_file(awkward_session, None)
    assert vars(first)["hunks"] and all("hunks" not in vars(f) for f in awkward_session.diff.files if f is not first)
    named = awkward_session.diff.file("pkg/calc.py")
    assert named is not None and "hunks" not in vars(named)
    _read_first_file(awkward_session, "pkg/calc.py")  # `--file`: that one
    assert vars(named)["hunks"]


def test_an_empty_diff_has_no_first_file(tmp_path: Path) -> None:
    make_repo(tmp_path / "r", {"a.py": "x = 1\n"}, {"a.py": "x = 1\n"})
    session = ReviewSession.open(tmp_path / "r", "agent/work")
    assert session.diff.first_listed() is None
    _read_first_file(session, None)  # nothing to read, and no error


def test_each_entry_s_counts_take_the_cells_counted_for_them(tmp_path: Path, awkward_session: ReviewSession) -> None:
    # binary, empty, renamed, deleted, non-UTF-8 (the awkward repo), and counts of four and five digits
    big = {"big.py": "".join(f"x{i} = {i}\n" for i in range(12345)), "mid.py": "y = 0\n" * 1000}
    make_repo(tmp_path / "r", {"mid.py": "y = 1\n" * 1000}, big)
    sessions = [awkward_session, ReviewSession.open(tmp_path / "r", "agent/work")]
    files = [f for s in sessions for f in s.diff.files]
    assert {f.added for f in files} >= {0, 12345, 1000} and any(f.binary for f in files)
    for s in sessions:
        drawn = FileList(s.diff)
        for f in s.diff.files:
            assert _counts_width(f) == drawn._counts(f).cell_length, f.path
