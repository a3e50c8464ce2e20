"""QueueScreen: every agent branch in one keyboard list, ordered by what needs the reviewer first.

The rows come from the core (`core/queue`: read in a worker, ordered by one
pure function); this screen draws them, filters and sorts them, snoozes a row
and opens the review of the one under the cursor. Coming back from a review
(`escape` there) re-reads the queue and puts the cursor on the same branch;
a finished background sweep reads only its own row's evidence again (the
whole queue at most once a minute), and a read that lands while the reviewer
moved leaves the cursor where they moved it.
Drawing the queue never runs a test. The list is a QueueTable: fixed columns,
only the visible rows drawn, so ten thousand branches paint at once; every
cell is `Text` (a trailer holding `[@click=app.quit]` is drawn as those
characters). A cut (more branches than the cap) is said in the title. How a
row, the title and the focus line read is queue_rows.py; the background
sweep of the branches waiting for evidence is queue_sweep.py.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.content import Content
from textual.widgets import Input, Static

from reviewui.core.config import load_user_prefs, save_user_pref
from reviewui.core.queue.order import TIER_NAMES, Row
from reviewui.core.queue.read import QueueSource, QueueView
from reviewui.core.safe_text import visible
from reviewui.ui.widgets.key_footer import KeyFooter
from reviewui.ui.widgets.queue_table import QueueTable

from reviewui.ui.screens.queue_rows import COLUMNS, SORTS, focus_words, row_cells, sorted_rows, title_words
from reviewui.ui.screens.queue_sweep import BackgroundSweep, QueueSwept
from reviewui.ui.screens.queue_verdict import RowVerdictFlow

if TYPE_CHECKING:
    from reviewui.core.session import ReviewSession

WHOLE_READ_EVERY = 60.0
"""Seconds after a whole read of the queue within which a finished sweep reads only its own row again."""


class QueueRead(Message):
    """The queue was read (in a worker); or, with `kept_at`, the rows of the last read were found."""

    def __init__(self, view: QueueView, kept_at: float | None = None, nth: int = 0,
                 over: list[Row] | None = None) -> None:
        super().__init__()
        self.view = view
        self.rows = view.rows
        self.kept_at = kept_at
        """When the kept rows were read (None: this is a fresh read)."""
        self.nth = nth
        """Which read this is (QueueScreen.read counts them): an older one than the last is stale."""
        self.over = over
        """For one swept row read again: the read's rows it updates (dropped if another read came since)."""


class QueueReady(Message):
    """The queue is on screen (tests wait for this, never poll)."""


class QueueScreen(Screen[None]):
    """The review queue."""

    BINDINGS = [
        Binding("j,down", "cursor(1)", "Down", show=False, id="queue.down", tooltip="Next row"),
        Binding("k,up", "cursor(-1)", "Up", show=False, id="queue.up", tooltip="Previous row"),
        Binding("enter", "open", "Open", id="queue.open", tooltip="Open the review of the branch under the cursor"),
        Binding("slash", "filter", "Filter", id="queue.filter", tooltip="Show only branches whose name or reason match"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="queue.clear_filter",
                tooltip="Show every branch again (the filter box's escape)"),
        Binding("s", "sort", "Sort", id="queue.sort", tooltip="Cycle the order: tier, waiting, size, name"),
        Binding("z", "snooze", "Snooze", id="queue.snooze", tooltip="Snooze the branch until it changes"),
        Binding("r", "rerun", "Rerun", id="queue.rerun", tooltip="Rerun the evidence of the branch under the cursor"),
        Binding("ctrl+r", "refresh", "Refresh", show=False, id="queue.refresh", tooltip="Read the queue again"),
        Binding("a", "approve", "Approve", id="queue.approve",
                tooltip="Approve from the row (its evidence complete, for this head)"),
        Binding("x", "reject", "Reject", id="queue.reject", tooltip="Reject from the row, with a reason"),
        *[Binding(str(n), f"tier({n})", f"Tier {n}", show=False, id=f"queue.tier{n}",
                  tooltip=f"Jump to the first row of tier {n} ({TIER_NAMES[n]})") for n in range(1, 6)],
        Binding("question_mark", "app.help", "Help", id="queue.help", tooltip="Every key of every view"),
        Binding("q", "app.quit", "Quit", id="queue.quit", tooltip="Quit reviewui"),
    ]

    DEFAULT_CSS = """
    QueueScreen #queue-title { height: 1; padding: 0 1; background: $panel; }
    QueueScreen #queue-table { height: 1fr; }
    QueueScreen #queue-title.cut { color: $warning; }
    QueueScreen #queue-filter { dock: bottom; display: none; }
    QueueScreen #queue-filter.shown { display: block; }
    QueueScreen #queue-focus { height: 1; padding: 0 1; color: $text-muted; }
    """

    sort = reactive("tier")
    """How the rows are ordered (remembered in the user config)."""

    def __init__(self, source: QueueSource, sweep: bool = True) -> None:
        super().__init__()
        self.source = source
        self.background = BackgroundSweep(self, source, sweep)
        """Fills the rows' evidence in behind the reviewer's back (queue_sweep.py)."""
        self.rows: list[Row] = []
        self.shown: list[Row] = []
        self.omitted = 0
        """Branches past the cap the last read did not list (said in the title)."""
        self.kept_at: float | None = None
        """While the rows shown are the last start's (snapshot.py): when they were read."""
        self.kept_count = 0
        """How many rows that read had (only its first screenful is shown)."""
        self.filter_text = ""
        self._keep: str | None = None
        """The branch the cursor should land on after the next read."""
        self.read_rows: list[Row] = []
        """The last read's rows as the core gave them (before the sweep's own `as_known`)."""
        self._read_at = 0.0
        """When the last whole read was on screen (time.monotonic)."""
        self.loaded = asyncio.Event()
        """Set each time a read of the queue is on screen (tests wait on it, never poll)."""
        self.opened = asyncio.Event()
        """Set when a review opened from the queue is on screen."""
        wanted = load_user_prefs().get("queue-sort")
        self.set_reactive(QueueScreen.sort, wanted if wanted in SORTS else "tier")

    @property
    def sweeping(self) -> str | None:
        """The branch the background sweep is on now."""
        return self.background.sweeping

    @property
    def swept(self) -> asyncio.Event:
        """Set each time the background sweep finishes a branch (tests wait on it)."""
        return self.background.swept

    def compose(self) -> ComposeResult:
        yield Static(Content("review queue: reading…"), id="queue-title")
        yield QueueTable(COLUMNS, id="queue-table")
        yield Static(Content(""), id="queue-focus")
        yield Input(placeholder="filter: part of a branch name or reason (enter applies, escape clears)",
                    id="queue-filter")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#queue-table", QueueTable).focus()
        self.read()

    # --- reading ---------------------------------------------------------------

    _reads = 0
    """Reads asked for so far: only the last one's rows are drawn."""

    def read(self) -> None:
        """Read the queue again (in a worker); `loaded` is set when it is drawn."""
        self.loaded.clear()
        self._reads += 1
        self._read_rows(self._reads)

    @work(thread=True, exclusive=True, group="queue-read", exit_on_error=False)
    def _read_rows(self, nth: int) -> None:
        from reviewui.core.queue import snapshot
        from reviewui.core.run.scratch_slots import repo_id

        where = snapshot.path_for(repo_id(self.source.repo), self.source.base)
        if not self.rows:  # the first read: the last one's rows at once (snapshot.py), then the real one
            kept = snapshot.load(where)
            if kept is not None:
                self.kept_count = kept.count
                self.post_message(QueueRead(QueueView(kept.rows, kept.omitted), kept_at=kept.saved_at, nth=nth))
        view = self.source.read()
        self.post_message(QueueRead(view, nth=nth))
        snapshot.save(where, view.rows, view.omitted)

    @on(QueueRead)
    def _read(self, message: QueueRead) -> None:
        if message.nth != self._reads:
            # An earlier read, overtaken (a thread worker runs on when a newer one replaces it): what it
            # read may predate what made the newer one (a verdict written from the row), so it is not drawn.
            return
        if message.kept_at is not None:
            if self.loaded.is_set():
                return  # the real read came first
            self.kept_at = message.kept_at
            self.omitted = message.view.omitted
            self.rows = list(message.rows)
            self.redraw()
            return
        if message.over is not None and message.over is not self.read_rows:
            return  # a whole read came in since: it has the swept row too
        self.kept_at = None
        for notice in message.view.notices:
            self.notify(visible(notice), severity="warning", markup=False)
        if message.over is None:
            self._read_at = time.monotonic()
        self.omitted = message.view.omitted
        self.read_rows = message.rows
        self.rows = [self.background.as_known(r) for r in message.rows]
        self.redraw()
        self.loaded.set()
        self.post_message(QueueReady())
        self._sweep_next()

    # --- the background sweep ----------------------------------------------------

    def _sweep_next(self) -> None:
        """Start sweeping the next branch still waiting for evidence (rerun requests first)."""
        if self.is_current and self.background.start_next(self.rows):
            self.rows = [self.background.as_known(r) for r in self.rows]
            self.redraw()

    @on(QueueSwept)
    def _swept(self, message: QueueSwept) -> None:
        self.background.finished(message)
        if time.monotonic() - self._read_at > WHOLE_READ_EVERY:
            self.read()  # now and then the whole queue: branches pushed meanwhile
        else:
            self.loaded.clear()
            self._read_row(message.branch, self._reads)

    @work(thread=True, exclusive=True, group="queue-row", exit_on_error=False)
    def _read_row(self, branch: str, nth: int) -> None:
        """The swept branch's evidence read again, the queue ordered again (a whole read of 10 000 branches
        after every sweep kept a core busy)."""
        from reviewui.core.queue.order import order

        rows = self.read_rows
        records = {r.record.branch: r.record for r in rows if r.record.branch == branch}
        fresh = {r.branch: r for r in self.source.with_evidence(list(records.values()))}
        view = QueueView(order([fresh.get(r.record.branch, r.record) for r in rows]), self.omitted)
        self.post_message(QueueRead(view, nth=nth, over=rows))

    def on_unmount(self) -> None:
        self.background.stop()  # a sweep in flight stops with the app

    def redraw(self) -> None:
        """Draw the rows that pass the filter, in the chosen order; the cursor stays on its branch."""
        table = self.query_one("#queue-table", QueueTable)
        keep = self._keep or self.current_branch()
        self._keep = None
        wanted = self.filter_text.lower()
        self.shown = [r for r in sorted_rows(self.rows, self.sort) if not r.hidden and (
            not wanted or wanted in r.record.branch.lower() or wanted in r.reason.lower())]
        now = datetime.now(timezone.utc)
        shown = self.shown
        at = next((i for i, r in enumerate(shown) if r.record.branch == keep), None) if keep else None
        table.set_rows(len(shown), lambda n: row_cells(shown[n], now),
                       cursor=at if at is not None else table.cursor_row)
        hidden = sum(1 for r in self.rows if r.hidden)
        count = self.kept_count if self.kept_at is not None else len(self.shown)
        box = self.query_one("#queue-title", Static)
        box.update(Content(title_words(count, self.sort, self.kept_at, self.filter_text, hidden, self.omitted)))
        box.set_class(bool(self.omitted), "cut")
        self._focus_line()

    def current_row(self) -> Row | None:
        """The row under the cursor, or None when the queue is empty."""
        table = self.query_one("#queue-table", QueueTable)
        if not self.shown or table.cursor_row < 0 or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row]

    def current_branch(self) -> str | None:
        """The branch under the cursor (its full name)."""
        row = self.current_row()
        return row.record.branch if row else None

    @on(QueueTable.RowHighlighted)
    def _highlighted(self) -> None:
        self._keep = None  # the reviewer moved on: a read in flight lands them where they are now
        self._focus_line()
        # the footer: `a`/`x` are on for a row with its evidence only, and every key the kept rows had off
        # is on once the real read is drawn (each redraw puts the cursor, and so comes here)
        self.refresh_bindings()

    @on(QueueTable.RowSelected)
    def _selected(self) -> None:
        self.action_open()  # the table takes `enter` itself and says so with this message

    def _focus_line(self) -> None:
        self.query_one("#queue-focus", Static).update(Content(focus_words(self.current_row(), self.filter_text)))

    # --- keys -------------------------------------------------------------------

    def action_cursor(self, step: int) -> None:
        table = self.query_one("#queue-table", QueueTable)
        table.move_cursor(table.cursor_row + step)

    def action_tier(self, tier: int) -> None:
        n = next((i for i, r in enumerate(self.shown) if r.tier == tier), None)
        if n is None:
            self.notify(f"no branch in tier {tier} ({TIER_NAMES[tier]})", markup=False)
            return
        self.query_one("#queue-table", QueueTable).move_cursor(n)

    def action_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]

    def watch_sort(self, how: str) -> None:
        save_user_pref("queue-sort", how)
        if self.is_mounted:
            self.redraw()

    def action_filter(self) -> None:
        box = self.query_one("#queue-filter", Input)
        box.add_class("shown")
        box.focus()

    def action_clear_filter(self) -> None:
        """Close the filter box and show every branch again."""
        box = self.query_one("#queue-filter", Input)
        box.value = ""
        box.remove_class("shown")
        self.query_one("#queue-table", QueueTable).focus()
        if self.filter_text:
            self.filter_text = ""
            self.redraw()

    @on(Input.Submitted, "#queue-filter")
    def _filter(self, event: Input.Submitted) -> None:
        self.filter_text = event.value.strip()
        event.input.remove_class("shown")
        self.query_one("#queue-table", QueueTable).focus()
        self.redraw()

    def action_snooze(self) -> None:
        from reviewui.core.queue.read import snooze

        row = self.current_row()
        if row is None:
            return
        snooze(self.source.repo, row.record.branch, row.record.head)
        self._keep = row.record.branch
        self.read()

    def action_refresh(self) -> None:
        self._keep = self.current_branch()
        self.read()

    def action_rerun(self) -> None:
        row = self.current_row()
        if row is None:
            return
        branch = row.record.branch
        self.background.rerun(branch)
        self.notify(f"evidence of {visible(branch)} will be made afresh", markup=False)
        self._sweep_next()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_filter":
            return bool(self.filter_text) or self.query_one("#queue-filter", Input).has_class("shown")
        if action in ("approve", "reject", "snooze", "rerun", "sort", "filter") and self.kept_at is not None:
            return False  # the last start's rows: nothing is done from them until the real read is in
        if action in ("approve", "reject"):
            row = self.current_row()
            # From the row only when its evidence is complete, for this head.
            return row is not None and row.record.evidence.status == "ready"
        if action == "rerun":
            return self.background.enabled
        return True

    def action_approve(self) -> None:
        self._verdict_from_row("approve")

    def action_reject(self) -> None:
        self._verdict_from_row("reject")

    def _verdict_from_row(self, verdict: str) -> None:
        row = self.current_row()
        if row is None or row.record.evidence.status != "ready" or self.kept_at is not None:
            return
        self._keep = row.record.branch
        RowVerdictFlow(self, self.source, self.read).start(row.record.branch, verdict)

    def action_open(self) -> None:
        row = self.current_row()
        if row is not None:
            self._keep = row.record.branch
            self.opened.clear()
            self.open_review(row.record.branch)

    @work(thread=True, exclusive=True, group="queue-open", exit_on_error=False)
    def open_review(self, branch: str) -> None:
        """Open the branch's review session (git work) and push its screen."""
        from reviewui.core.errors import ReviewError
        from reviewui.core.session import ReviewSession

        try:
            session = ReviewSession.open(self.source.repo, branch, None)
        except ReviewError as e:
            self.app.call_from_thread(self.notify, visible(str(e)), severity="error", markup=False)
            return
        self.app.call_from_thread(self._push_review, session)

    def _push_review(self, session: "ReviewSession") -> None:
        from reviewui.ui.screens.review import ReviewScreen

        self.app.push_screen(ReviewScreen(session))
        self.opened.set()

    def on_screen_resume(self) -> None:
        """Back from a review: read the queue again (its verdict may have moved the row); the
        background sweep goes on from there."""
        if self.rows:
            self.read()
