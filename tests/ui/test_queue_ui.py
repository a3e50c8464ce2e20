"""The queue in the app: a walk from the queue into a review, a verdict, and back to the same row."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from reviewui.core.queue.read import QueueSource
from reviewui.ui.queue_app import QueueApp
from reviewui.ui.screens.queue import QueueScreen
from tests.gitrepo import RepoBuilder
from tests.ui.ready import review_ready


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    for var, name in (("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache"), ("XDG_CONFIG_HOME", "config")):
        monkeypatch.setenv(var, str(tmp_path / name))
    rb = RepoBuilder(tmp_path / "r")
    rb.commit({"calc.py": "def add(a, b):\n    return a + b\n"}, "base")
    for name in ("one", "two", "three"):
        rb.branch(f"agent/{name}")
        rb.commit({f"{name}.py": f"X = '{name}'\n"}, f"agent: {name}")
        rb.checkout("main")
    return rb


async def loaded(screen: QueueScreen) -> None:
    await asyncio.wait_for(screen.loaded.wait(), 30)


async def test_queue_enter_verdict_and_back_to_the_same_row(repo: RepoBuilder) -> None:
    app = QueueApp(QueueSource(repo.root, "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", ()),
                   sweep=False)
    async with app.run_test(size=(160, 40)) as pilot:
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await loaded(queue)
        assert [r.record.branch for r in queue.shown] == ["agent/one", "agent/three", "agent/two"]
        await pilot.press("j")
        assert queue.current_branch() == "agent/three"
        await pilot.press("enter")
        await asyncio.wait_for(queue.opened.wait(), 30)  # the review opens in a worker
        review = await review_ready(app, pilot)
        assert review.session.target.branch == "agent/three"
        await pilot.press("a")
        await pilot.pause()
        # nothing was marked reviewed: an approve needs its confirm key, not enter
        await pilot.press(*"fine", "ctrl+y")
        await pilot.pause()
        queue.loaded.clear()
        await pilot.press("escape")
        await loaded(queue)
        assert app.screen is queue
        assert queue.current_branch() == "agent/three"
        row = queue.current_row()
        assert row is not None and row.tier == 5 and row.record.verdict == "approve"


async def test_sort_survives_a_refresh_and_a_snooze_moves_the_row(repo: RepoBuilder) -> None:
    app = QueueApp(QueueSource(repo.root, "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", ()),
                   sweep=False)
    async with app.run_test(size=(160, 40)) as pilot:
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await loaded(queue)
        await pilot.press("s", "s", "s")  # tier -> waiting -> size -> name
        assert queue.sort == "name"
        queue.loaded.clear()
        await pilot.press("ctrl+r")
        await loaded(queue)
        assert queue.sort == "name" and [r.record.branch for r in queue.shown] == ["agent/one", "agent/three",
                                                                                   "agent/two"]
        queue.loaded.clear()
        await pilot.press("z")
        await loaded(queue)
        assert queue.current_row() is not None and queue.current_row().tier == 4


async def test_the_background_sweep_fills_a_row_in_and_a_verdict_from_the_row(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.core.queue.helpers import fix_add_repo

    rb = fix_add_repo(tmp_path, monkeypatch)
    app = QueueApp(QueueSource(rb.root, "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", ()))
    async with app.run_test(size=(160, 40)) as pilot:
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await loaded(queue)
        assert queue.sweeping == "agent/fix-add"  # started behind the reviewer's back
        assert queue.current_row() is not None and queue.current_row().reason.startswith("evidence running")
        assert not app.screen.check_action("approve", ())  # no verdict from the row before the evidence
        queue.loaded.clear()
        await asyncio.wait_for(queue.swept.wait(), 300)
        await loaded(queue)
        row = queue.current_row()
        assert row is not None and row.tier == 2 and row.record.evidence.bites >= 1, row
        queue.loaded.clear()
        await pilot.press("a")
        await pilot.pause()
        await pilot.press(*"looks right", "enter")
        # The verdict is written in a worker that reads the queue again when done; closing the prompt
        # also reads it (the screen resumed), which can finish first: wait for the verdict's own read.
        await app.workers.wait_for_complete()
        await loaded(queue)
        row = queue.current_row()
        assert row is not None and row.tier == 5 and row.record.verdict == "approve"


async def test_a_read_overtaken_by_a_newer_one_is_not_drawn(repo: RepoBuilder) -> None:
    """A thread worker replaced by a newer read still posts what it read: its rows may predate a verdict."""
    from reviewui.core.queue.read import QueueView
    from reviewui.ui.screens.queue import QueueRead
    from tests.ui.ready import handled_posted

    app = QueueApp(QueueSource(repo.root, "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", ()),
                   sweep=False)
    async with app.run_test(size=(160, 40)):
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await loaded(queue)
        rows = list(queue.rows)
        assert len(rows) == 3
        queue.post_message(QueueRead(QueueView(rows[:1]), nth=queue._reads - 1))  # an older read, arriving late
        await handled_posted(queue)
        assert queue.rows == rows
        queue.post_message(QueueRead(QueueView(rows[:1]), nth=queue._reads))  # the last one asked for is drawn
        await handled_posted(queue)
        assert queue.rows != rows and len(queue.rows) == 1
