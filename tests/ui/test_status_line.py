"""The status line says what is running, never what ran: no "escape cancels" once a bite-check is over."""

from __future__ import annotations

from textual.widgets import Static

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.messages import BiteProgress
from reviewui.ui.widgets.key_footer import KeyFooter
from tests.ui.ready import review_ready
from tests.ui.test_bite_ui import SIZE, session  # noqa: F401 - the bite repo fixture


def status(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.screen.query_one("#status", Static).render())


async def test_no_stale_status_after_a_finished_run(session: ReviewSession) -> None:  # noqa: F811
    app = make_app(session, initial_file="calc.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        await pilot.press("b")
        await pilot.pause()
        assert "escape cancels" in status(app)  # while it runs, it says so
        assert "esc Cancel" in screen.query_one(KeyFooter).render_line(0).text
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not screen.bites_part.biting
        final = status(app)
        assert final.startswith("bite-check done") and "escape" not in final
        assert "Cancel" not in screen.query_one(KeyFooter).render_line(0).text
        screen.post_message(BiteProgress(1, 3))  # a progress report arriving after the end
        await pilot.pause()
        assert status(app) == final


async def test_a_bite_worker_gone_without_a_report_leaves_no_running_status(session: ReviewSession) -> None:  # noqa: F811
    app = make_app(session, initial_file="calc.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        screen.bites_part._run = lambda hunks, cancel: None  # ends without BiteFinished (killed, say)
        await pilot.press("b")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not screen.bites_part.biting
        assert "escape cancels" not in status(app) and "stopped" in status(app)
        assert "Cancel" not in screen.query_one(KeyFooter).render_line(0).text


async def test_at_60x15_the_results_panel_gives_way_to_the_diff_and_r_brings_it(session: ReviewSession) -> None:  # noqa: F811
    from reviewui.ui.widgets.results_panel import ResultsPanel

    app = make_app(session, initial_file="calc.py")
    async with app.run_test(size=(60, 15)) as pilot:
        screen = await review_ready(app, pilot)
        await pilot.press("b")
        await app.workers.wait_for_complete()
        await pilot.pause()
        panel = screen.query_one(ResultsPanel)
        assert panel.result is not None and not panel.display  # the result is there, the diff has the room
        assert screen.diff_view.size.height >= 8
        assert any("r shows them" in n.message for n in app._notifications)
        await pilot.press("r")
        await pilot.pause()
        assert panel.display and panel.size.height >= 2
        assert screen.diff_view.size.height >= 4  # half each, never one row of diff
        assert "? Help" in screen.query_one(KeyFooter).render_line(0).text
