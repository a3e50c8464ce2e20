"""The queue's background sweep: the evidence of each branch still waiting for it, one at a time.

While the reviewer reads the queue, the branches in tier 3 whose evidence is
pending or stale are swept (`core/queue/sweep.sweep_branch`, into the evidence
store) one after another in a thread worker of the screen, those the reviewer
asked to rerun (`r`) first. What only the screen knows is drawn on the rows
(`as_known`): the branch being swept, stalled past three times the median
sweep, or a sweep that could not be made. A sandbox that cannot run here
stops the sweep for good, in one notice.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace
from functools import partial

from textual.message import Message
from textual.screen import Screen

from reviewui.core.queue.order import Evidence, Row, place, stalled
from reviewui.core.queue.read import QueueSource
from reviewui.core.safe_text import visible


class QueueSwept(Message):
    """The background sweep finished one branch (`why` None: its evidence is stored)."""

    def __init__(self, branch: str, why: str | None, seconds: float, fatal: bool = False) -> None:
        super().__init__()
        self.branch = branch
        self.why = why
        self.seconds = seconds
        self.fatal = fatal
        """The sandbox cannot run here: the sweep stops for every branch."""


class BackgroundSweep:
    """The sweep's state and its worker, owned by the queue screen (which reports each QueueSwept back)."""

    def __init__(self, screen: Screen[None], source: QueueSource, enabled: bool) -> None:
        self.screen = screen
        self.source = source
        self.enabled = enabled
        """Fill the rows' evidence in behind the reviewer's back."""
        self.sweeping: str | None = None
        """The branch the background sweep is on now."""
        self._start = 0.0
        self._times: list[float] = []
        self._failed: dict[str, str] = {}
        """Branches whose sweep could not be made, with why (shown as broken evidence)."""
        self._rerun: list[str] = []
        """Branches the reviewer asked to rerun (`r`), first in line."""
        self._stopped: str | None = None
        """Why the background sweep stopped for good (the sandbox cannot run here)."""
        self._cancel = threading.Event()
        self.swept = asyncio.Event()
        """Set each time the background sweep finishes a branch (tests wait on it)."""

    def as_known(self, row: Row) -> Row:
        """`row` with what this screen knows and the store does not: the branch being swept now,
        stalled past three times the median sweep, or a sweep that could not be made."""
        e, branch = row.record.evidence, row.record.branch
        if e.status not in ("pending", "stale"):
            return row
        if branch == self.sweeping:
            median = sorted(self._times)[len(self._times) // 2] if self._times else None
            e = stalled(Evidence("running"), time.monotonic() - self._start, median)
        elif branch in self._failed:
            e = Evidence("broken", why=self._failed[branch])
        else:
            return row
        return place(replace(row.record, evidence=e))

    def start_next(self, rows: list[Row]) -> bool:
        """Start sweeping the next branch of `rows` still waiting for evidence (rerun requests first);
        False when none is started (nothing waits, one runs, or the sweep is off or stopped)."""
        if not self.enabled or self.sweeping is not None or self._stopped:
            return False
        waiting = [r.record.branch for r in rows if r.tier == 3 and r.record.evidence.status in ("pending", "stale")
                   and r.record.branch not in self._failed]
        todo = [b for b in self._rerun if any(r.record.branch == b for r in rows)] or waiting
        if not todo:
            return False
        branch = todo[0]
        fresh = branch in self._rerun
        if fresh:
            self._rerun.remove(branch)
        self.sweeping = branch
        self._start = time.monotonic()
        self.screen.run_worker(partial(self._sweep, branch, fresh), name="_sweep", group="queue-sweep",
                               thread=True, exclusive=True, exit_on_error=False)
        return True

    def _sweep(self, branch: str, fresh: bool) -> None:
        from reviewui.core.errors import SandboxError
        from reviewui.core.queue.sweep import sweep_branch

        start = time.monotonic()
        try:
            why = sweep_branch(self.source.repo, branch, self.source.base, fresh=fresh, cancel=self._cancel)
        except SandboxError as e:
            self.screen.post_message(QueueSwept(branch, str(e), time.monotonic() - start, fatal=True))
            return
        self.screen.post_message(QueueSwept(branch, why, time.monotonic() - start))

    def finished(self, message: QueueSwept) -> None:
        """One branch's sweep ended: keep its time or why it failed (a fatal one stops the sweep)."""
        self.sweeping = None
        if message.fatal:
            self._stopped = message.why
            self.screen.notify(visible(f"background sweep stopped: {message.why}"), severity="error", markup=False)
        elif message.why is None:
            self._times.append(message.seconds)
            self._failed.pop(message.branch, None)
        elif message.why != "cancelled":
            self._failed[message.branch] = message.why
        self.swept.set()

    def rerun(self, branch: str) -> None:
        """Make `branch`'s evidence afresh, next in line (its failure forgotten)."""
        self._failed.pop(branch, None)
        if branch not in self._rerun and branch != self.sweeping:
            self._rerun.insert(0, branch)

    def stop(self) -> None:
        """Stop a sweep in flight (the screen is going away)."""
        self._cancel.set()
