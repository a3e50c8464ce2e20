"""Waiting for the review screen to settle: its ReviewReady, not a poll."""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.message_pump import MessagePump
from textual.pilot import Pilot

from reviewui.ui.screens.review import ReviewScreen


async def review_ready(app: App[None], pilot: Pilot[None], timeout: float = 60.0) -> ReviewScreen:
    """Wait until the review screen posted ReviewReady (start-up work settled), then let it draw."""
    screen = app.screen
    assert isinstance(screen, ReviewScreen)
    await asyncio.wait_for(screen.startup.ready.wait(), timeout)
    await pilot.pause()
    return screen


async def first_painted(app: App[None], pilot: Pilot[None], timeout: float = 30.0) -> ReviewScreen:
    """Wait until the review screen's first paint (its start-up work may still be running)."""
    screen = app.screen
    assert isinstance(screen, ReviewScreen)
    deadline = asyncio.get_running_loop().time() + timeout
    # Bounded: an app that crashed before painting must fail the test, not hang it.
    while screen.first_paint_at is None:
        assert app.is_running, "the app stopped before its first paint"
        assert asyncio.get_running_loop().time() < deadline, f"no first paint within {timeout}s"
        await pilot.pause(0.02)
    await pilot.pause()
    return screen


async def handled_posted(node: MessagePump, timeout: float = 30.0) -> None:
    """Wait until `node` (the app, a screen) has handled every message posted to it before this call.

    A callback queued behind them runs after them: an event, not a pause that
    hopes the machine was quick enough.
    """
    done = asyncio.Event()
    node.call_later(done.set)
    await asyncio.wait_for(done.wait(), timeout)


async def app_handled_posted(app: App[None], timeout: float = 30.0) -> None:
    """Wait until the app has handled every message posted to it before this call (its `notify`s, say)."""
    await handled_posted(app, timeout)
