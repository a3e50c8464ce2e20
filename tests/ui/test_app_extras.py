"""Command palette, remembered theme, findings jump, fixture definitions, cancelling a sweep."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from textual.widgets import OptionList

from reviewui.core.config import user_config_dir
from reviewui.core.session import ReviewSession, RunOptions
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.screens.findings import FindingsScreen
from reviewui.ui.widgets.fixtures_pane import FixturesPane
from tests.gitrepo import make_repo
from tests.ui.ready import review_ready
from tests.project_python import pytest_command

SIZE = (160, 40)


async def test_palette_offers_every_review_action(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for wanted in ("Next hunk (n)", "Bite (b)", "Sweep (B)", "Approve (a)", "Reject (x)", "Findings (F)",
                       "Transcript (t)", "Fixtures (f)", "Probe (e)", "Side-by-side (s)"):
            assert wanted in titles
        assert any("theme" in t.lower() for t in titles)


async def test_theme_choice_is_remembered(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "reviewui-dark"
        app.theme = "reviewui-light"
        await pilot.pause()
    saved = tomllib.loads((user_config_dir() / "config.toml").read_text())
    assert saved["theme"] == "reviewui-light"
    again = make_app(awkward_session)
    assert again.theme == "reviewui-light"


async def test_starting_the_app_writes_no_preference(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
    assert not (user_config_dir() / "config.toml").exists()


async def test_findings_panel_enter_jumps_to_the_place(tmp_path: Path) -> None:
    built = build_sample("03-null-guard", tmp_path)
    app = make_app(ReviewSession.open(built.repo_dir, "agent/null-guard"), initial_file="ledger/writer.py")
    async with app.run_test(size=SIZE) as pilot:
        await review_ready(app, pilot)
        await pilot.press("F")
        await pilot.pause()
        assert isinstance(app.screen, FindingsScreen)
        first = app.screen.findings[0]
        assert (first.kind, first.severity) == ("tests-not-additive", "error")
        await pilot.press("enter")
        await pilot.pause()
        view = app.screen.diff_view
        assert view.file.path == "tests/test_writer.py"
        h = view.current_hunk
        assert h.new_start <= first.line < h.new_start + h.new_len


async def test_enter_on_a_fixture_shows_its_definition_and_backspace_returns(tmp_path: Path) -> None:
    conftest = "import pytest\n\n\n@pytest.fixture\ndef book():\n    return {'balance': 0}\n"
    test = "def test_balance(book):\n    assert book['balance'] == 0\n"
    make_repo(tmp_path, {"tests/conftest.py": conftest, "app.py": "X = 1\n"}, {"tests/test_book.py": test})
    app = make_app(ReviewSession.open(tmp_path, "agent/work"), initial_file="tests/test_book.py")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        await app.workers.wait_for_complete()
        await pilot.pause()
        pane = app.screen.query_one(FixturesPane)
        lines = pane.query_one("#fixture-lines", OptionList)
        key = next(o.id for o in lines.options if o.id and o.id.startswith("fx:"))
        before = [o.prompt.plain for o in lines.options]
        assert any("book" in ln and "tests/conftest.py:5" in ln for ln in before)
        lines.highlighted = lines.get_option_index(key)
        lines.focus()
        await pilot.press("enter")
        await pilot.pause()
        shown = [o.prompt.plain for o in lines.options]
        assert any(ln.strip() == "4 @pytest.fixture" for ln in shown)
        assert any(ln.strip() == "6     return {'balance': 0}" for ln in shown)
        await pilot.press("backspace")
        await pilot.pause()
        assert [o.prompt.plain for o in lines.options] == before


@pytest.mark.slow
async def test_escape_cancels_a_running_sweep(tmp_path: Path) -> None:
    slow_test = "import time\nfrom app import f\n\n\ndef test_f():\n    time.sleep(30)\n    assert f() == 2\n"
    make_repo(tmp_path, {"app.py": "def f():\n    return 1\n"}, {"app.py": "def f():\n    return 2\n", "tests/test_app.py": slow_test})
    session = ReviewSession.open(tmp_path, "agent/work", run=RunOptions(test_cmd=pytest_command()))
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("B")
        await pilot.pause(1.0)
        assert app.screen.bites_part.biting
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not app.screen.bites_part.biting
        assert str(app.screen.query_one("#status").render()).startswith("bite-check cancelled")
