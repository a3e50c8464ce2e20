"""QueueApp: the review app opened on the queue of agent branches (`reviewui queue`).

The queue is its first screen; `enter` pushes the review of a branch (a
session of its own), and `escape` there, when nothing is running, comes back
to the queue on the same row, read again.
"""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.screen import Screen

from reviewui.ui.app import ReviewApp
from reviewui.ui.screens.queue import QueueReady, QueueScreen, QueueSource


class QueueApp(ReviewApp):
    """The review app over the queue."""

    BINDINGS = [
        *ReviewApp.BINDINGS,
        Binding("escape", "to_queue", "Queue", id="app.back_to_queue", tooltip="Back to the review queue"),
    ]

    def __init__(self, source: QueueSource, theme: str | None = None, sweep: bool = True,
                 resume_gc: bool = False) -> None:
        super().__init__(None, theme=theme)
        self.source = source
        self.sweep = sweep
        """Fill the queue's evidence in with a background sweep."""
        self.resume_gc = resume_gc
        """The cyclic garbage collector was paused for the start-up: the queue turns it on once its first
        real read is on screen (its 10 000 rows are what the start-up allocates)."""

    @on(QueueReady)
    def started(self) -> None:
        """The queue's first real read is on screen: the collector goes back on (when it was paused)."""
        if self.resume_gc:
            import gc

            self.resume_gc = False
            gc.enable()

    def get_default_screen(self) -> Screen:
        return QueueScreen(self.source, sweep=self.sweep)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "to_queue":
            return len(self.screen_stack) > 1 and not isinstance(self.screen, QueueScreen)
        return True

    def action_to_queue(self) -> None:
        """Back from a review to the queue."""
        if len(self.screen_stack) > 1:
            self.pop_screen()
