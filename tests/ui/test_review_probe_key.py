"""`e` on the review screen opens the probe editor for the hunk under the cursor."""

from __future__ import annotations

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.screens.probe import ProbeScreen
from reviewui.ui.screens.review import ReviewScreen


async def test_e_opens_probe_for_current_hunk_and_escape_returns(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session, initial_file="pkg/calc.py")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("e")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ProbeScreen)
        assert screen.hunk is not None and screen.hunk.file == "pkg/calc.py"
        from textual.widgets import TextArea

        editor = screen.query_one(TextArea)
        assert editor.language == "python"  # textual[syntax] is a dependency: highlighting is on
        assert "from pkg.calc import add" in editor.text and "def test_probe_" in editor.text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
