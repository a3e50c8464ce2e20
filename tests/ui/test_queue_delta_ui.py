"""The queue app's delta column: an outdated verdict's row says how many hunks changed since."""

from __future__ import annotations

import asyncio

from reviewui.core.queue.read import QueueSource
from reviewui.ui.queue_app import QueueApp
from reviewui.ui.screens.queue import QueueScreen
from reviewui.ui.screens.queue_rows import COLUMNS
from reviewui.ui.widgets.queue_table import QueueTable
from tests.core.queue.test_queue_delta import reworked  # noqa: F401 - the fixture
from tests.gitrepo import RepoBuilder


async def test_the_delta_column(reworked: RepoBuilder) -> None:  # noqa: F811
    app = QueueApp(QueueSource(reworked.root, "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", ()),
                   sweep=False)
    async with app.run_test(size=(200, 30)) as pilot:
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await asyncio.wait_for(queue.loaded.wait(), 30)
        table = queue.query_one("#queue-table", QueueTable)  # the queue's own list since issue 38
        names = [c for c, _ in COLUMNS]
        cells = {table.cell(y, names.index("branch")).plain: table.cell(y, names.index("delta")).plain
                 for y in range(table.row_count)}
        assert cells == {"agent/reworked": "changed since your approve: 2 hunks", "agent/new": "—"}
        # the column is past a 200-column screen's edge: the line under the table says it for the cursor's row
        table.move_cursor([r.record.branch for r in queue.shown].index("agent/reworked"))
        await pilot.pause()
        assert "changed since your approve: 2 hunks" in str(queue.query_one("#queue-focus").render())
