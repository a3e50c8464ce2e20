"""The transcript tab on the third sample: flags, filters, and the hunk ↔ turn jumps."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import ContentSwitcher

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.widgets.transcript_view import TranscriptView

SIZE = (180, 45)


@pytest.fixture
def sample3(tmp_path: Path) -> ReviewSession:
    built = build_sample("03-null-guard", tmp_path)
    return ReviewSession.open(built.repo_dir, "agent/null-guard")


async def loaded(app, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_t_shows_turns_and_filters_flagged(sample3: ReviewSession) -> None:
    app = make_app(sample3)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        await pilot.press("t")
        assert app.screen.query_one("#main-switch", ContentSwitcher).current == "transcript-pane"
        view = app.screen.query_one(TranscriptView)
        total = len(view.transcript.turns)
        assert len(view.shown) == total
        first = view.render_line(0).text
        assert first.startswith("#1    system")
        await pilot.press("exclamation_mark")
        await pilot.pause()
        assert 0 < len(view.shown) < total
        assert all(view.transcript.turns[i].flags for i in view.shown)
        await pilot.press("l")  # first flag present
        await pilot.pause()
        flag = view.flag_filter
        assert flag and all(flag in view.transcript.turns[i].flags for i in view.shown)
        await pilot.press("end")
        assert view.current_turn is view.transcript.turns[view.shown[-1]]


async def test_enter_expands_a_turn_with_its_tool_calls(sample3: ReviewSession) -> None:
    app = make_app(sample3)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        await pilot.press("t")
        view = app.screen.query_one(TranscriptView)
        edit_turn = next(t for t in view.transcript.turns if t.files_written)
        view.goto_turn(edit_turn.index)
        rows_before = len(view.rows)
        await pilot.press("enter")
        await pilot.pause()
        assert len(view.rows) > rows_before
        lines = [view.render_line(y).text for y in range(view.size.height)]
        assert any("→ str_replace_editor" in ln for ln in lines)
        produced = app.screen.links.hunks_for(edit_turn.index)
        assert produced
        path, index = produced[0]
        assert any(f"wrote: {path} hunk {index + 1}" in ln for ln in lines)


async def test_g_jumps_from_hunk_to_turn_and_back(sample3: ReviewSession) -> None:
    app = make_app(sample3, initial_file="ledger/defaults.py")
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        screen = app.screen
        badges = [b.text for b in screen.diff_view.badges[0]]
        assert any(b.startswith("turn ") for b in badges)
        await pilot.press("g")
        await pilot.pause()
        view = screen.query_one(TranscriptView)
        turn = view.current_turn
        assert turn is not None and "ledger/defaults.py" in " ".join(turn.files_written)
        await pilot.press("g")
        await pilot.pause()
        assert screen.query_one("#main-switch", ContentSwitcher).current == "diff-pane"
        assert screen.diff_view.file.path == "ledger/defaults.py"


async def test_no_transcript_says_so(tmp_path: Path) -> None:
    from tests.gitrepo import make_repo

    make_repo(tmp_path, {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"})
    app = make_app(ReviewSession.open(tmp_path, "agent/work"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await pilot.pause()
        assert app.screen.query_one("#main-switch", ContentSwitcher).current == "diff-pane"


async def test_a_transcript_that_fails_to_load_does_not_stop_the_review(sample3: ReviewSession, monkeypatch) -> None:
    def broken() -> None:
        raise RuntimeError("loader bug")

    monkeypatch.setattr(sample3, "transcript", broken)
    monkeypatch.setattr(sample3, "findings", lambda bite=None: [])
    app = make_app(sample3)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        for _ in range(1000):  # up to 20 s under load; wait_for_complete would re-raise the worker's error
            await pilot.pause(0.02)
            if screen.diff_loaded and screen.findings_ready:
                break
        assert screen.diff_loaded  # the diff was still parsed: the background work started
        assert screen.findings_ready
        shown = [n.message for n in app._notifications]
        assert any("failed: RuntimeError: loader bug" in m for m in shown)


async def test_t_before_the_pane_is_mounted_mounts_it_once(sample3: ReviewSession, monkeypatch) -> None:
    """The pane is mounted after the first paint; `t` (or two callers at once) must not race it."""
    import asyncio

    from reviewui.ui.screens.review import ReviewScreen

    async def no_auto_start(self) -> None:
        return None

    monkeypatch.setattr(ReviewScreen, "start_transcript", no_auto_start)
    app = make_app(sample3)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert not screen.query(TranscriptView)  # not composed with the screen
        await asyncio.gather(screen.transcript_pane_ready(), screen.run_action("toggle_transcript"))
        await pilot.pause()
        assert len(screen.query(TranscriptView)) == 1
        assert screen.query_one("#main-switch", ContentSwitcher).current == "transcript-pane"
        assert screen.focused is screen.query_one(TranscriptView)


async def test_unattributed_files_are_announced_and_subagent_turns_marked(tmp_path: Path) -> None:
    import json

    from tests.gitrepo import make_repo

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
    resolver = fixtures / "openhands" / "resolver_output.jsonl"
    patch = json.loads(resolver.read_text().splitlines()[0])["git_patch"].replace("\r\n", "\n")
    license_text = "\n".join(ln[1:] for ln in patch.split("\n") if ln.startswith("+") and not ln.startswith("+++")) + "\n"
    repo = tmp_path / "r"
    make_repo(repo, {"README.md": "x\n"}, {"LICENSE": license_text, "NOTES.md": "[b]not[/b] from the transcript\n"})
    session = ReviewSession.open(repo, "agent/work", "main", transcript=resolver)
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        await pilot.press("t")
        await loaded(app, pilot)
        assert app.screen.links.unattributed == ("NOTES.md",)
        assert app.screen.links.turns_for_file("LICENSE") == [4]
        notes = [n.message for n in app._notifications]
        assert any("unattributed: 1 changed file" in m and "NOTES.md" in m for m in notes)

    task = fixtures / "claude-code" / "session_task_subagent_lines35-57.jsonl"
    session = ReviewSession.open(repo, "agent/work", "main", transcript=task)
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        await pilot.press("t")
        await loaded(app, pilot)
        view = app.screen.query_one(TranscriptView)
        lines = [view.render_line(y).text for y in range(min(view.size.height, len(view.rows)))]
        marked = [ln for ln in lines if "↳ subagent" in ln]
        grouped = [t for t in view.transcript.turns if t.group is not None]
        assert grouped and len(marked) == min(len(grouped), len(lines) - 1)
        assert "↳ subagent" not in lines[0]  # the Task call itself is the main agent's
