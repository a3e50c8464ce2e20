"""The queue app's delta column: an outdated verdict's row says how many hunks changed since."""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable

from reviewui.core.queue.read import QueueSource
from reviewui.ui.queue_app import QueueApp
from reviewui.ui.screens.queue import QueueScreen
from tests.core.queue.test_queue_delta import reworked  # noqa: F401 - the fixture
from tests.gitrepo import RepoBuilder


async def test_the_delta_column(reworked: RepoBuilder) -> None:  # noqa: F811
    app = QueueApp(QueueSource(reworked.root, "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", ()),
                   sweep=False)
    async with app.run_test(size=(200, 30)):
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await asyncio.wait_for(queue.loaded.wait(), 30)
        table = queue.query_one("#queue-table", DataTable)
        cells = {str(table.get_cell_at((y, 2))): str(table.get_cell(table.coordinate_to_cell_key((y, 0)).row_key,
                                                                     "delta"))
                 for y in range(table.row_count)}
        assert cells == {"agent/reworked": "changed since your approve: 2 hunks", "agent/new": "—"}
