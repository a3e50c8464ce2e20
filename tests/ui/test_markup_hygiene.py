"""Hygiene: no string from the repository, a note or a transcript ever reaches a markup parser.

Every widget API that takes a `str` parses it as markup (Static, notify, DataTable cells, labels) through
`Content.from_markup` or rich's `Text.from_markup`. This test marks every piece of repository data with a
tag (trailers, a file name, a commit subject, a note's reviewer, reason and foreign text), walks the queue, a
review opened from it and its verdict history, and fails if any markup parse was handed a marked string:
such data must reach a widget as `Text` or `Content` (or escaped). A control run first shows the hook
catches a marked `str` handed to `Static.update`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.content import Content
from textual.widgets import Static

from reviewui.core.queue.read import QueueSource
from reviewui.ui.queue_app import QueueApp
from reviewui.ui.screens.history import HistoryScreen
from reviewui.ui.screens.queue import QueueScreen
from tests.clirun import run_cli
from tests.gitrepo import RepoBuilder
from tests.ui.ready import review_ready

TAG = "MRKP"


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every marked string a markup parser is handed while the test runs."""
    seen: list[str] = []
    content_from, text_from = Content.from_markup.__func__, Text.from_markup.__func__  # type: ignore[attr-defined]

    def content(cls: Any, markup: Any, **kw: Any) -> Any:
        if isinstance(markup, str) and TAG in markup:
            seen.append(markup)
        return content_from(cls, markup, **kw)

    def text(cls: Any, markup: Any, *a: Any, **kw: Any) -> Any:
        if isinstance(markup, str) and TAG in markup:
            seen.append(markup)
        return text_from(cls, markup, *a, **kw)

    monkeypatch.setattr(Content, "from_markup", classmethod(content))
    monkeypatch.setattr(Text, "from_markup", classmethod(text))
    return seen


@pytest.fixture
def repo(tmp_path: Path) -> RepoBuilder:
    rb = RepoBuilder(tmp_path / "r")
    rb.commit({"calc.py": "def add(a, b):\n    return a + b\n"}, "base")
    rb.branch("agent/one")
    rb.commit({"calc.py": "def add(a, b):\n    return b + a\n", f"pkg/[b]{TAG}file.py": "X = 1\n"},
              f"[b]{TAG}subject\n\nAgent: [reverse]{TAG}agent\nTask: [@click=app.quit]{TAG}task\n")
    rb.checkout("main")
    rb.git("config", "user.name", f"[i]{TAG}reviewer")
    assert run_cli("verdict", "agent/one", "reject", "--reason", f"[b]{TAG}reason", cwd=rb.root).returncode == 0
    rb.git("notes", "--ref=reviewui", "append", "-m", f"[b]{TAG}foreign", "agent/one")
    return rb


async def test_the_hook_sees_a_marked_string_handed_to_a_widget(parsed: list[str]) -> None:
    from textual.app import App, ComposeResult

    class Control(App[None]):
        def compose(self) -> ComposeResult:
            yield Static(id="s")

    async with Control().run_test() as pilot:
        pilot.app.query_one("#s", Static).update(f"[b]{TAG}")
        await pilot.pause()
    assert parsed == [f"[b]{TAG}"]


async def test_no_repository_string_reaches_a_markup_parser(repo: RepoBuilder, parsed: list[str]) -> None:
    app = QueueApp(QueueSource(repo.root, "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", ()),
                   sweep=False)
    async with app.run_test(size=(200, 40)) as pilot:
        queue = app.screen
        assert isinstance(queue, QueueScreen)
        await asyncio.wait_for(queue.loaded.wait(), 60)
        await pilot.pause()
        assert queue.current_branch() == "agent/one"
        await pilot.press("enter")
        await asyncio.wait_for(queue.opened.wait(), 60)
        await review_ready(app, pilot)
        await pilot.press("v")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, HistoryScreen)
        text = str(app.screen.query_one("#history-text", Static).render())
        assert f"[b]{TAG}reason" in text  # shown, as the characters they are
    assert parsed == [], parsed
