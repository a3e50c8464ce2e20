"""The queue app for a fleet: repository text drawn as text, never markup (cells read span by span); a cut
said on screen; an empty branch said as such; `a` on a row asks what the review's own dialog asks."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from rich.text import Text
from textual.content import Content

from reviewui.core.queue.read import QueueSource, QueueView
from reviewui.core.session import ReviewSession
from reviewui.ui.queue_app import QueueApp
from reviewui.ui.screens.queue import QueueScreen
from reviewui.ui.screens.queue_rows import COLUMNS, row_cells
from reviewui.ui.screens.verdict import VerdictModal
from reviewui.ui.widgets.queue_table import QueueTable
from tests.core.queue.test_queue_fleet import sweep_of
from tests.gitrepo import RepoBuilder

AGENT = "[reverse green]mallory"
TASK = "[@click=app.quit]T-1"


@pytest.fixture
def repo(tmp_path: Path) -> RepoBuilder:
    rb = RepoBuilder(tmp_path / "r")
    rb.commit({"calc.py": "def add(a, b):\n    return a + b\n"}, "base")
    rb.branch("agent/one")
    rb.commit({"calc.py": "def add(a, b):\n    return b + a\n"}, f"agent: swap\n\nAgent: {AGENT}\nTask: {TASK}\n")
    rb.checkout("main")
    rb.git("branch", "agent/fresh", "main")
    return rb


def source(rb: RepoBuilder, limit: int = 10_000) -> QueueSource:
    return QueueSource(rb.root, "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", (), limit)


async def loaded(queue: QueueScreen) -> None:
    await asyncio.wait_for(queue.loaded.wait(), 60)


def column(name: str) -> int:
    return [c for c, _ in COLUMNS].index(name)


async def test_markup_in_trailers_is_drawn_as_text(repo: RepoBuilder) -> None:
    app = QueueApp(source(repo), sweep=False)
    async with app.run_test(size=(200, 30)) as pilot:
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await loaded(queue)
        n = [r.record.branch for r in queue.shown].index("agent/one")
        table = queue.query_one(QueueTable)
        cell = table.cell(n, column("agent"))
        assert isinstance(cell, Text) and cell.plain == f"{AGENT} {TASK}"
        assert cell.spans == [] and not cell.style  # the brackets styled nothing
        line = table.render_line(n + 1 - round(table.scroll_y))
        drawn = "".join(s.text for s in line)
        assert "[reverse green]mallor" in drawn  # the characters, cut by the column's width, not a style
        assert not any(s.style and (s.style.reverse or s.style.meta.get("@click")) for s in line
                       if "mallory" in s.text or "T-1" in s.text)
        # clicking the cell runs no action: the app is still there
        table.move_cursor(n)
        await pilot.click(QueueTable, offset=(sum(w + 1 for _, w in COLUMNS[:column("agent")]) + 3, n + 1))
        await pilot.pause()
        assert app.is_running


async def test_a_cut_is_said_on_screen_and_an_empty_branch_as_such(repo: RepoBuilder) -> None:
    app = QueueApp(source(repo, limit=1), sweep=False)
    async with app.run_test(size=(200, 30)):
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await loaded(queue)
        title = str(queue.query_one("#queue-title").render())
        assert len(queue.shown) == 1 and "1 older branch not listed" in title, title
    app = QueueApp(source(repo), sweep=False)
    async with app.run_test(size=(200, 30)):
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await loaded(queue)
        fresh = next(r for r in queue.rows if r.record.branch == "agent/fresh")
        assert (fresh.tier, fresh.reason) == (4, "no commits beyond the base")


async def test_a_on_a_row_needs_ctrl_y_against_evidence_as_the_reviews_dialog_does(repo: RepoBuilder) -> None:
    session = ReviewSession.open(repo.root, "agent/one", "main")
    assert session.save_evidence(sweep_of(session, "toothless"))
    app = QueueApp(source(repo), sweep=False)
    async with app.run_test(size=(200, 40)) as pilot:
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await loaded(queue)
        queue.query_one(QueueTable).move_cursor([r.record.branch for r in queue.shown].index("agent/one"))
        row = queue.current_row()
        assert row is not None and row.tier == 2 and row.record.evidence.toothless == 1
        await pilot.press("a")
        await app.workers.wait_for_complete()
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, VerdictModal)
        assert any("toothless" in item for item in modal.draft.against)
        await pilot.press(*"fine", "enter")
        await pilot.pause()
        assert app.screen is modal and repo.git("notes", "--ref=reviewui", "list") == ""  # enter did not
        queue.loaded.clear()
        await pilot.press("ctrl+y")
        await app.workers.wait_for_complete()
        await loaded(queue)
        assert repo.git("notes", "--ref=reviewui", "list") != ""
        row = next(r for r in queue.rows if r.record.branch == "agent/one")
        assert (row.tier, row.record.verdict) == (5, "approve")


def test_queue_cells_and_lines_are_text_or_content() -> None:
    # the screen's own helpers: every cell a Text (no str reaches the table)
    from datetime import datetime, timezone

    from reviewui.core.queue.order import BranchRecord, place

    row = place(BranchRecord("agent/[b]x", "a" * 40, "b" * 40, datetime.now(timezone.utc), agent="[i]y"))
    cells = row_cells(row, datetime.now(timezone.utc))
    assert len(cells) == len(COLUMNS) and all(isinstance(c, Text) and not c.spans for c in cells)
    assert cells[column("branch")].plain == "agent/[b]x" and Content("[b]").plain == "[b]"


async def test_a_warm_start_paints_the_last_reads_rows_and_acts_on_none_of_them(
        repo: RepoBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    app = QueueApp(source(repo), sweep=False)
    async with app.run_test(size=(200, 30)):
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await loaded(queue)
        await app.workers.wait_for_complete()  # the rows are kept after the read
    release = threading.Event()
    real = QueueSource.read

    def slow(self: QueueSource) -> QueueView:
        release.wait(30)
        return real(self)

    monkeypatch.setattr(QueueSource, "read", slow)
    app = QueueApp(source(repo), sweep=False)
    async with app.run_test(size=(200, 30)) as pilot:
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        for _ in range(500):
            if queue.rows:
                break
            await pilot.pause(0.01)
        assert queue.rows and not queue.loaded.is_set() and queue.kept_at is not None
        title = str(queue.query_one("#queue-title").render())
        assert "as of" in title and "reading…" in title
        assert not queue.check_action("snooze", ()) and not queue.check_action("approve", ())
        assert "Filter" not in app.export_screenshot()  # the footer draws what the kept rows allow
        release.set()
        await loaded(queue)
        assert queue.kept_at is None and "reading…" not in str(queue.query_one("#queue-title").render())
        await pilot.pause()
        shot = app.export_screenshot()
        assert "Filter" in shot  # drawn again: it kept `?` and `q` alone until a key was pressed
        assert "Open" in shot  # enter: the table's own binding, which hid the screen's from the footer


async def test_a_verdict_on_ones_own_work_stands_against_it_in_the_dialog(repo: RepoBuilder) -> None:
    from tests.gitrepo import ENV

    session = ReviewSession.open(repo.root, "agent/one", "main")
    assert session.save_evidence(sweep_of(session, "bites"))
    repo.git("config", "user.email", ENV["GIT_AUTHOR_EMAIL"])  # the reviewer wrote the head commit
    app = QueueApp(source(repo), sweep=False)
    async with app.run_test(size=(200, 40)) as pilot:
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await loaded(queue)
        queue.query_one(QueueTable).move_cursor([r.record.branch for r in queue.shown].index("agent/one"))
        await pilot.press("a")
        await app.workers.wait_for_complete()
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, VerdictModal)
        assert modal.draft.against and modal.draft.against[0].endswith("are the author of the head commit: "
                                                                         "a verdict on your own work")
        await pilot.press("enter")  # enter does not record it; ctrl+y would
        await pilot.pause()
        assert app.screen is modal and repo.git("notes", "--ref=reviewui", "list") == ""


async def test_the_collector_paused_for_the_start_goes_back_on_with_the_first_real_read(repo: RepoBuilder) -> None:
    import gc

    gc.disable()
    try:
        app = QueueApp(source(repo), sweep=False, resume_gc=True)
        async with app.run_test(size=(200, 30)) as pilot:
            queue = app.screen
            assert isinstance(queue, QueueScreen)
            await loaded(queue)
            await pilot.pause()
            assert gc.isenabled()
    finally:
        gc.enable()


class _Gated(QueueSource):
    """A source whose whole reads wait on `gate` while it is armed, counting reads and row reads."""

    gate: threading.Event | None = None
    reads = 0
    row_reads = 0

    def read(self) -> QueueView:
        type(self).reads += 1
        if type(self).gate is not None:
            assert type(self).gate.wait(60)
        return super().read()

    def with_evidence(self, records):  # type: ignore[no-untyped-def]
        type(self).row_reads += 1
        return super().with_evidence(records)


def gated(rb: RepoBuilder) -> _Gated:
    cls = type("Gated", (_Gated,), {})  # counters of its own per test
    return cls(rb.root, "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", ())


async def test_a_read_landing_keeps_the_cursor_where_the_reviewer_moved_it(repo: RepoBuilder) -> None:
    from reviewui.ui.screens.queue_sweep import QueueSwept

    repo.git("branch", "agent/third", "agent/one")
    src = gated(repo)
    app = QueueApp(src, sweep=False)
    async with app.run_test(size=(200, 30)) as pilot:
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await loaded(queue)
        assert queue.query_one(QueueTable).cursor_row == 0
        first = queue.current_branch()
        type(src).gate = threading.Event()
        queue._read_at = 0.0  # as if the last whole read were long ago: the sweep's end reads the queue again
        queue.post_message(QueueSwept(first or "", None, 1.0))
        await pilot.pause()
        await pilot.press("down", "down")  # while that read is in flight
        moved = queue.current_branch()
        assert moved != first
        type(src).gate.set()
        await loaded(queue)
        assert queue.current_branch() == moved  # not yanked back to where the sweep ended


async def test_a_finished_sweep_reads_its_row_again_not_the_whole_queue(repo: RepoBuilder) -> None:
    from reviewui.ui.screens.queue_sweep import QueueSwept

    src = gated(repo)
    app = QueueApp(src, sweep=False)
    async with app.run_test(size=(200, 30)):
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await loaded(queue)
        row = next(r for r in queue.rows if r.record.branch == "agent/one")
        assert (row.tier, row.record.evidence.status) == (3, "pending")
        session = ReviewSession.open(repo.root, "agent/one", "main")
        assert session.save_evidence(sweep_of(session, "toothless"))  # what the background sweep stores
        reads = type(src).reads
        queue.loaded.clear()
        queue.post_message(QueueSwept("agent/one", None, 1.0))
        await loaded(queue)
        row = next(r for r in queue.rows if r.record.branch == "agent/one")
        assert (row.tier, row.record.evidence.status, row.record.evidence.toothless) == (2, "ready", 1)
        assert (type(src).reads, type(src).row_reads) == (reads, 1)
        assert [r.record.branch for r in queue.shown][0] == "agent/one"  # ordered again: tier 2 first


async def test_escape_clears_the_filter_as_its_box_says(repo: RepoBuilder) -> None:
    from textual.widgets import Input

    app = QueueApp(source(repo), sweep=False)
    async with app.run_test(size=(200, 30)) as pilot:
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await loaded(queue)
        every = len(queue.shown)
        await pilot.press("slash", *"no-such-branch", "enter")
        assert queue.shown == [] and "no branch matches 'no-such-branch'" in str(
            queue.query_one("#queue-focus").render())
        await pilot.press("escape")  # from the table, the filter still on
        assert len(queue.shown) == every and queue.filter_text == ""
        await pilot.press("slash", *"one")
        assert "escape clears" in queue.query_one("#queue-filter", Input).placeholder
        await pilot.press("escape")  # from the box itself, before enter
        box = queue.query_one("#queue-filter", Input)
        assert not box.has_class("shown") and box.value == "" and queue.query_one(QueueTable).has_focus
        assert len(queue.shown) == every and app.is_running


def test_the_findings_cell_counts_errors_first_then_warnings_then_info() -> None:
    # as the findings list orders them; the counts come from the store, in no order of their own
    from datetime import datetime, timezone

    from reviewui.core.queue.order import BranchRecord, Evidence, place

    now = datetime.now(timezone.utc)
    evidence = Evidence("ready", findings={"info": 4, "warning": 1, "error": 3, "\x1b]0;x": 2, "hint": 0})
    cells = row_cells(place(BranchRecord("agent/x", "a" * 40, "b" * 40, now, evidence=evidence)), now)
    assert cells[column("findings")].plain == "3e 1w 4i 2\\x1b"  # an unknown severity last, drawn safe; none of 0
