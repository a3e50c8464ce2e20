"""Waiting for the review screen to settle: its ReviewReady, not a poll."""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.pilot import Pilot

from reviewui.ui.screens.review import ReviewScreen


async def review_ready(app: App[None], pilot: Pilot[None], timeout: float = 60.0) -> ReviewScreen:
    """Wait until the review screen posted ReviewReady (start-up work settled), then let it draw."""
    screen = app.screen
    assert isinstance(screen, ReviewScreen)
    await asyncio.wait_for(screen.startup.ready.wait(), timeout)
    await pilot.pause()
    return screen
