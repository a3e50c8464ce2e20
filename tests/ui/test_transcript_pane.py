"""The transcript tab on the third sample: flags, filters, and the hunk ↔ turn jumps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import ContentSwitcher

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.widgets.transcript_view import TranscriptView
from tests.ui.ready import review_ready

SIZE = (180, 45)


@pytest.fixture
def sample3(tmp_path: Path) -> ReviewSession:
    built = build_sample("03-null-guard", tmp_path)
    return ReviewSession.open(built.repo_dir, "agent/null-guard")


async def loaded(app, pilot) -> None:
    await review_ready(app, pilot)


async def open_pane(app, pilot) -> TranscriptView:
    """Wait for the review, press `t`, wait for the transcript; return its view."""
    await loaded(app, pilot)
    await pilot.press("t")
    await loaded(app, pilot)
    return app.screen.query_one(TranscriptView)


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
        produced = app.screen.ledger.links.hunks_for(edit_turn.index)
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
        screen = await review_ready(app, pilot)  # wait_for_complete would re-raise the worker's error
        assert screen.startup.diff_loaded  # the diff was still parsed: the background work started
        assert screen.ledger.findings_ready
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
        await asyncio.gather(screen.transcript_part.pane_ready(), screen.run_action("toggle_transcript"))
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
        assert app.screen.ledger.links.unattributed == ("NOTES.md",)
        assert app.screen.ledger.links.turns_for_file("LICENSE") == [4]
        notes = [n.message for n in app._notifications]
        assert any("unattributed: 1 changed file" in m and "NOTES.md" in m for m in notes)

    task = fixtures / "claude-code" / "session_task_subagent_lines35-57.jsonl"
    session = ReviewSession.open(repo, "agent/work", "main", transcript=task)
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_pane(app, pilot)
        view.cursor = 1  # subagent turns are folded under the Task call since issue 17's leftovers: unfold
        await pilot.press("o")
        await pilot.pause()
        lines = [view.render_line(y).text for y in range(min(view.size.height, len(view.rows)))]
        marked = [ln for ln in lines if "↳ subagent" in ln]
        grouped = [t for t in view.transcript.turns if t.group is not None]
        assert grouped and len(marked) == min(len(grouped), len(lines) - 1)
        assert "↳ subagent" not in lines[0]  # the Task call itself is the main agent's


@pytest.fixture
def sample1(tmp_path: Path) -> ReviewSession:
    built = build_sample("01-trim-reasoning", tmp_path)
    return ReviewSession.open(built.repo_dir, "agent/trim-reasoning")


async def test_the_turns_start_in_the_column_the_lines_above_them_start_in(sample3: ReviewSession) -> None:
    # Drawn flush against the file list's border (`│#1`), one column left of the summary above.
    from textual.widgets import Static

    app = make_app(sample3)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_pane(app, pilot)
        summary = app.screen.query_one("#transcript-summary", Static)
        assert view.content_region.x == summary.content_region.x > view.region.x
        assert view.render_line(0).text.startswith("#1")  # the row itself as before


def drawn(view: TranscriptView) -> list[str]:
    """Every row of the view as drawn at the current horizontal scroll."""
    top = int(view.scroll_offset.y)
    return [view.render_line(y - top).text for y in range(len(view.rows))]


async def test_z_shows_all_of_the_reasoning_wrapped_at_80x24(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(app, pilot)
        await pilot.press("t")
        await pilot.pause()
        view = app.screen.query_one(TranscriptView)
        turn = view.transcript.turns[3]
        assert turn.reasoning_chars == 1823
        # at 80 columns the header leaves the text room (no token bar)
        assert "# Trim the wasted reasoning" in drawn(view)[0]
        view.goto_turn(turn.index)
        await pilot.press("z")
        await pilot.pause()
        width = view.scrollable_content_region.width
        rows = drawn(view)
        assert all(len(r.rstrip()) <= width for r in rows)
        joined = " ".join(r.strip() for r in rows)
        words = turn.reasoning.split()
        assert " ".join(words) in " ".join(joined.split())  # every word, in order, nothing cut off


async def test_w_turns_wrap_off_for_a_sideways_scroll(sample1: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(app, pilot)
        await pilot.press("t")
        await pilot.pause()
        view = app.screen.query_one(TranscriptView)
        view.goto_turn(4)
        await pilot.press("z")
        await pilot.pause()
        wrapped_rows = len(view.rows)
        await pilot.press("w")
        await pilot.pause()
        assert not view.wrap and len(view.rows) < wrapped_rows
        assert view.virtual_size.width > view.scrollable_content_region.width
        long_row = max(range(len(view.rows)), key=lambda y: len(drawn(view)[y].rstrip()))
        before = drawn(view)[long_row]
        await pilot.press("right", "right", "right")
        await pilot.pause()
        assert view.scroll_offset.x > 0
        assert drawn(view)[long_row] != before
        await pilot.press("w")
        await pilot.pause()
        assert view.wrap and len(view.rows) == wrapped_rows and view.scroll_offset.x == 0


async def test_an_edit_shows_what_it_changed(sample3: ReviewSession) -> None:
    app = make_app(sample3)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        await pilot.press("t")
        view = app.screen.query_one(TranscriptView)
        turn = next(t for t in view.transcript.turns if any(e.new and "MISSING_AMOUNT\n" in e.new
                                                            and "import" in e.new for e in t.edits))
        view.goto_turn(turn.index)
        await pilot.press("enter")
        await pilot.pause()
        rows = [r.strip() for r in drawn(view)]
        at = rows.index("✎ replace /workspace/ledger/writer.py")
        diff = rows[at + 1: at + 8]
        assert "+ from ledger.defaults import MISSING_AMOUNT" in diff
        assert not any(r.startswith("- ") for r in diff)  # the import was only added


async def test_search_looks_in_reasoning_and_tool_input(sample1: ReviewSession, sample3: ReviewSession) -> None:
    app = make_app(sample1)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        await pilot.press("t")
        view = app.screen.query_one(TranscriptView)
        word = "NUDGE after a truncated turn"  # only in turn 4's reasoning
        assert not any(word.lower() in t.text.lower() for t in view.transcript.turns)
        view.set_search(word)
        assert [view.transcript.turns[i].index for i in view.shown] == [4]
        view.set_search("old_string")  # a key of the Edit tool's input, nowhere in any text
        assert [view.transcript.turns[i].index for i in view.shown] == [6]


async def test_diff_keys_are_off_while_the_transcript_is_in_front(sample3: ReviewSession) -> None:
    from reviewui.ui.widgets.key_footer import KeyFooter

    app = make_app(sample3)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        screen = app.screen
        diff_cursor = screen.diff_view.cursor
        shown_path = screen.file_list.highlighted_path
        assert screen.check_action("next_hunk", ()) is True
        assert "Next hunk" in app.screen.query_one(KeyFooter).render_line(0).text
        await pilot.press("t")
        await pilot.pause()
        assert screen.check_action("next_hunk", ()) is False
        for key in ("n", "]", "space", "s"):
            await pilot.press(key)
        await pilot.pause()
        assert screen.diff_view.cursor == diff_cursor and screen.file_list.highlighted_path == shown_path
        assert not screen.diff_view.split
        footer = app.screen.query_one(KeyFooter).render_line(0).text
        assert "Next hunk" not in footer and "Search" in footer  # the transcript's keys, not the diff's
        await pilot.press("t")
        await pilot.pause()
        assert screen.check_action("next_hunk", ()) is True


# --- subagent turns fold under their Task call ------------------------------------------------------

TASK_SESSION = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "claude-code" / "session_task_subagent_lines35-57.jsonl"


@pytest.fixture
def task_session(tmp_path: Path) -> ReviewSession:
    from tests.gitrepo import make_repo

    repo = tmp_path / "r"
    make_repo(repo, {"README.md": "x\n"}, {"NOTES.md": "y\n"})
    return ReviewSession.open(repo, "agent/work", "main", transcript=TASK_SESSION)


async def test_subagent_turns_fold_under_the_task_call_and_o_unfolds_them(task_session: ReviewSession) -> None:
    from reviewui.ui.widgets.key_footer import KeyFooter

    app = make_app(task_session)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_pane(app, pilot)
        sub = [t.index for t in view.transcript.turns if t.group is not None]
        assert sub == list(range(2, 17))  # the Plan subagent's 15 turns, under the Task call of turn 1
        folded = drawn(view)
        assert len(folded) == len(view.transcript.turns) - len(sub) + 1  # 15 turns drawn as one line
        assert "draft the beads" in folded[0] and "↳ subagent: 15 turns (o to expand)" in folded[1]
        assert "tool-error ×" in folded[1]  # the failed reads inside are named on the folded line
        assert not any("EISDIR" in ln for ln in folded)  # turn 4's text is folded away
        assert "Subagents" in app.screen.query_one(KeyFooter).render_line(0).text
        view.cursor = 1
        await pilot.press("o")
        await pilot.pause()
        unfolded = drawn(view)
        assert len(unfolded) == len(view.transcript.turns)
        assert sum("↳ subagent" in ln for ln in unfolded) == 15 and any("EISDIR" in ln for ln in unfolded)
        assert view.current_turn.index == 2  # the cursor stays on the first turn it unfolded
        view.cursor = 5
        await pilot.press("o")  # on a subagent turn: folds its group again, cursor on the folded line
        await pilot.pause()
        assert drawn(view) == folded and view.cursor == 1
        await pilot.press("enter")  # enter on the folded line unfolds it too
        await pilot.pause()
        assert len(drawn(view)) == len(view.transcript.turns)
        view.cursor = 0
        await pilot.press("o")  # on the Task call: folds what it started
        await pilot.pause()
        assert drawn(view) == folded


async def test_a_search_or_a_jump_into_a_folded_group_unfolds_it(task_session: ReviewSession) -> None:
    app = make_app(task_session)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_pane(app, pilot)
        assert view.goto_turn(9)  # a jump (g from a hunk) to a subagent turn
        assert view.current_turn.index == 9 and view.rows[view.cursor][1] == -1
        assert len(drawn(view)) == len(view.transcript.turns)
        view.cursor = 3
        await pilot.press("o")
        await pilot.pause()
        assert any("↳ subagent: 15 turns" in ln for ln in drawn(view))
        view.set_search("EISDIR")  # only in turn 4, inside the folded group
        await pilot.pause()
        rows = drawn(view)
        assert len(rows) == 1 and "EISDIR" in rows[0] and "↳ subagent" in rows[0]
        view.set_search("")
        await pilot.pause()
        assert len(drawn(view)) == len(view.transcript.turns)  # the hit opened the group; it stays open


async def test_the_fold_key_has_an_id_the_keymap_rebinds_and_help_lists(task_session: ReviewSession) -> None:
    import tomli_w
    from textual.widgets import Static

    from reviewui.core.config import user_config_dir
    from reviewui.ui.screens.help import HelpScreen

    user_config_dir().mkdir(parents=True, exist_ok=True)
    (user_config_dir() / "config.toml").write_text(tomli_w.dumps({"keymap": {"transcript.subagents": "u"}}))
    app = make_app(task_session)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        assert not app.keymap_problems  # the id is known
        await pilot.press("t")
        await loaded(app, pilot)
        view = app.screen.query_one(TranscriptView)
        assert "(u to expand)" in drawn(view)[1]
        view.cursor = 1
        await pilot.press("u")
        await pilot.pause()
        assert len(drawn(view)) == len(view.transcript.turns)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text", Static).render())
        line = next(ln for ln in text.splitlines() if "transcript.subagents" in ln)
        assert line.split()[0] == "u" and "Fold or unfold the subagent turns" in line


async def test_no_fold_key_for_a_transcript_without_subagents(sample3: ReviewSession) -> None:
    from reviewui.ui.widgets.key_footer import KeyFooter

    app = make_app(sample3)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_pane(app, pilot)
        assert view.check_action("toggle_subagents", ()) is False
        assert "Subagents" not in app.screen.query_one(KeyFooter).render_line(0).text
        before = drawn(view)
        await pilot.press("o")
        await pilot.pause()
        assert drawn(view) == before


async def test_aider_turns_show_when_they_were_typed_and_the_pane_shows_the_notes(tmp_path: Path) -> None:
    import shutil

    from textual.widgets import Static

    from tests.gitrepo import make_repo

    aider = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "aider"
    stem = "simple-calulator_lines1165-1654.aider"
    for suffix in (".chat.history.md", ".input.history"):
        shutil.copy(aider / (stem + suffix), tmp_path / (stem + suffix))
    repo = tmp_path / "r"
    make_repo(repo, {"README.md": "x\n"}, {"NOTES.md": "y\n"})
    session = ReviewSession.open(repo, "agent/work", "main", transcript=tmp_path / (stem + ".chat.history.md"))
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_pane(app, pilot)
        rows = drawn(view)
        assert rows[0].startswith("#1    user      17:46:18 ") and "/help" in rows[0]
        assert "17:4" not in rows[1]  # Aider's output has no time
        summary = str(app.screen.query_one("#transcript-summary", Static).render())
        assert "2 '#### ' lines the human never typed" in summary and "17:53:24 'N'" in summary


async def test_a_nine_letter_role_keeps_a_gap_before_the_time(sample1: ReviewSession) -> None:
    # "assistant" (and "developer") fill the role column: the time must not run into it ("assistant09:02:15").
    app = make_app(sample1)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_pane(app, pilot)
        turns = [row for row in drawn(view) if row.startswith("#")]
        heads = [re.match(r"#\d+ +([a-z]+) +\d\d:\d\d:\d\d ", row) for row in turns]
        assert turns and all(heads), [row for row, m in zip(turns, heads, strict=True) if m is None]
        assert "assistant" in {m.group(1) for m in heads if m}
        # the time column stays one column for every role
        assert len({m.end() for m in heads if m}) == 1
