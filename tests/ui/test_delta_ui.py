"""The since-verdict view in the app: the header's words, `d` (only what changed) and back, `i` (the interdiff),
and the reviewed marks of unchanged hunks kept across a push, a rename and a rebase."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.session import ReviewSession
from reviewui.core.state import ReviewState
from reviewui.ui.app import make_app
from reviewui.ui.widgets.interdiff_pane import InterdiffPane
from reviewui.ui.widgets.review_header import ReviewHeader
from tests.core.delta.test_compute import FUNCS, _edit
from tests.gitrepo import RepoBuilder
from tests.ui.ready import review_ready

SIZE = (160, 40)
LIB = "".join(f"def g{i}():\n    return {i}\n\n\n" for i in range(3))


def _mark_everything(repo: Path, branch: str) -> None:
    """The reviewer marks every hunk of the branch as it is now (as `space` on each would)."""
    session = ReviewSession.open(repo, branch)
    state = ReviewState.load(repo, branch)
    for f in session.diff.files:
        for h in f.hunks:
            state.mark(h.file, h.header, h.text)
    state.save()


@pytest.fixture
def pushed(tmp_path: Path) -> RepoBuilder:
    """agent/work approved and fully marked at its first head; then pushed: one hunk kept, one changed,
    one new, and the agent's new module renamed (its text kept)."""
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"mod.py": FUNCS, "other.py": FUNCS}, "base")
    rb.branch("agent/work")
    rb.commit({"mod.py": _edit(_edit(FUNCS, 1, "    return 1\n"), 6, "    return 6\n"), "lib.py": LIB}, "first")
    _mark_everything(rb.root, "agent/work")
    session = ReviewSession.open(rb.root, "agent/work")
    session.verdict("approve", "")
    rb.commit({"mod.py": _edit(_edit(_edit(FUNCS, 1, "    return 1\n"), 6, "    return 66\n"), 10, "    return 10\n"),
               "lib.py": None, "pkg_lib.py": LIB}, "second")
    rb.checkout("main")
    return rb


async def test_header_keys_and_marks_after_a_push(pushed: RepoBuilder) -> None:
    session = ReviewSession.open(pushed.root, "agent/work")
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        header = screen.query_one(ReviewHeader)
        assert header.since.startswith("since your approve of ")
        assert header.since.endswith(": 1 hunk changed, 1 new, 2 unchanged")
        assert "since your approve of" in header.render().plain
        # the marks of the unchanged hunks stayed, the renamed module's included; the changed and new are not marked
        state = screen.ledger.state
        marked = {(h.file, h.index) for f in session.diff.files for h in f.hunks if state.is_marked(h.file, h.header, h.text)}
        assert marked == {("mod.py", 0), ("pkg_lib.py", 0)}
        assert header.progress == (2, 4)

        assert screen.check_action("delta_only", ()) is True
        every = list(screen.file_list.paths)
        assert set(every) == {"mod.py", "pkg_lib.py"}
        await pilot.press("d")
        assert screen.file_list.paths == ["mod.py"]
        screen.navigation.show("mod.py")
        drawn = {r.hunk for r in screen.diff_view.rows if r.kind == "hunk"}
        assert drawn == {1, 2}  # the unchanged hunk 0 is not drawn
        assert screen.diff_view.rows[0].text.startswith("1 hunk(s) unchanged since your verdict")
        await pilot.press("d")
        assert screen.file_list.paths == every
        assert {r.hunk for r in screen.diff_view.rows if r.kind == "hunk"} == {0, 1, 2}

        screen.navigation.show("mod.py", 1)  # the changed hunk
        await pilot.press("i")
        await pilot.pause()
        pane = screen.query_one("#interdiff", InterdiffPane)
        assert "changed since your verdict" in pane.text
        assert "-+    return 6" in pane.text and "++    return 66" in pane.text
        await pilot.press("n")  # the pane follows the cursor
        await pilot.pause()
        assert "new since your verdict" in pane.text


async def test_without_a_verdict_the_keys_are_disabled(tmp_path: Path) -> None:
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"mod.py": FUNCS}, "base")
    rb.branch("agent/work")
    rb.commit({"mod.py": _edit(FUNCS, 1, "    return 1\n")})
    rb.checkout("main")
    app = make_app(ReviewSession.open(rb.root, "agent/work"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        assert screen.query_one(ReviewHeader).since == ""
        assert screen.check_action("delta_only", ()) is None
        assert screen.check_action("interdiff", ()) is None
        await pilot.press("d")
        assert screen.file_list.shown is None and not screen.delta_part.only


async def test_marks_survive_a_rebase_onto_a_moved_base(tmp_path: Path) -> None:
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"mod.py": FUNCS}, "base")
    rb.branch("agent/work")
    rb.commit({"mod.py": _edit(_edit(FUNCS, 2, "    return 2\n"), 9, "    return 9\n")}, "agent")
    _mark_everything(rb.root, "agent/work")
    ReviewSession.open(rb.root, "agent/work").verdict("approve", "")
    rb.checkout("main")
    rb.commit({"mod.py": "import sys\n\n\n" + FUNCS}, "upstream")
    rb.checkout("agent/work")
    rb.git("rebase", "-q", "main")
    rb.checkout("main")
    session = ReviewSession.open(rb.root, "agent/work")
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        assert screen.query_one(ReviewHeader).since.endswith(": 0 hunks changed, 0 new, 2 unchanged")
        assert screen.query_one(ReviewHeader).progress == (2, 2)  # moved three lines down, still marked


async def test_a_mark_does_not_survive_a_change_only_bytes_tell(tmp_path: Path) -> None:
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"mod.py": FUNCS, "latin.py": b"A = 1\n"}, "base")
    rb.branch("agent/work")
    rb.commit({"latin.py": b"A = '\xff'\n", "mod.py": _edit(FUNCS, 1, "    return 1\n")})
    _mark_everything(rb.root, "agent/work")
    ReviewSession.open(rb.root, "agent/work").verdict("approve", "")
    rb.commit({"latin.py": b"A = '\xfe'\n"})  # decoded, both read as U+FFFD: the same text
    rb.checkout("main")
    session = ReviewSession.open(rb.root, "agent/work")
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        assert screen.query_one(ReviewHeader).since.endswith(": 1 hunk changed, 0 new, 1 unchanged")
        assert screen.query_one(ReviewHeader).progress == (1, 2)  # mod.py's mark kept, latin.py's not
