"""The UI twin of --trust-branch-config: `T` on the findings panel accepts the branch's config changes."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.screens.findings import FindingsScreen
from reviewui.ui.widgets.file_list import FileList
from reviewui.ui.screens.review import ReviewScreen
from tests.gitrepo import make_repo
from tests.ui.ready import review_ready

SIZE = (140, 40)
BASE = {"app.py": "def f():\n    return 1\n", "tests/test_app.py": "from app import f\n\n\ndef test_f():\n    assert f() == 1\n"}


async def _open_findings(app, pilot) -> FindingsScreen:
    # The start-up's findings first (ReviewReady: a worker not started yet is not waited for below), then
    # any recomputation under way.
    if isinstance(app.screen, ReviewScreen):
        await review_ready(app, pilot)
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("F")
    await pilot.pause()
    assert isinstance(app.screen, FindingsScreen)
    return app.screen


async def test_t_accepts_the_branch_config_and_findings_are_recomputed(tmp_path: Path) -> None:
    branch = {"app.py": "def f():\n    return 2\n", ".reviewui.toml": 'network = true\ntimeout = 9\n'}
    make_repo(tmp_path, BASE, branch)
    session = ReviewSession.open(tmp_path, "agent/work")
    app = make_app(session, initial_file="app.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_findings(app, pilot)
        cc = [f for f in screen.findings if f.kind == "config-changed"]
        assert len(cc) == 1 and "ignored" in cc[0].message and "network, timeout" in cc[0].message
        assert screen.check_action("trust_config", ()) is True
        assert session.settings.network is False
        await pilot.press("T")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, FindingsScreen)
        assert (session.settings.network, session.settings.timeout, session.settings.branch_config_trusted) == (True, 9.0, True)
        screen = await _open_findings(app, pilot)
        cc = [f for f in screen.findings if f.kind == "config-changed"]
        assert len(cc) == 1 and "accepted" in cc[0].message and cc[0].severity == "error"
        assert screen.check_action("trust_config", ()) is False  # nothing left to accept


async def test_accepted_test_globs_move_files_into_tests_in_the_file_list(tmp_path: Path) -> None:
    branch = {"checks/verify.py": "from app import f\n\n\ndef test_f():\n    assert f() == 1\n",
              ".reviewui.toml": 'test-globs = ["checks/**"]\n'}
    make_repo(tmp_path, BASE, branch)
    session = ReviewSession.open(tmp_path, "agent/work")
    app = make_app(session, initial_file="checks/verify.py")
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        files = app.screen.query_one("#files", FileList)
        assert not any(t.startswith("Tests") for t in files.group_titles())
        await _open_findings(app, pilot)
        await pilot.press("T")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert any(t.startswith("Tests (1)") for t in files.group_titles()), files.group_titles()


async def test_t_is_not_offered_without_a_config_change(tmp_path: Path) -> None:
    make_repo(tmp_path, BASE, {"app.py": "def f():\n    return 2\n"})
    session = ReviewSession.open(tmp_path, "agent/work")
    app = make_app(session, initial_file="app.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_findings(app, pilot)
        assert screen.check_action("trust_config", ()) is False
        await pilot.press("T")
        await pilot.pause()
        assert isinstance(app.screen, FindingsScreen) and session.settings.branch_config_trusted is False
