"""Comments drawn as rows under what they are on, in the unified and the side-by-side diff; `c` edits, empty deletes."""

from __future__ import annotations

import time

from textual.widgets import Input

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.screens.text_prompt import TextPromptModal
from reviewui.ui.widgets.diff_view import DiffView
from tests.ui.ready import first_painted, review_ready

SIZE = (140, 40)


def drawn(view: DiffView) -> list[str]:
    """The diff's rows as drawn on screen now (scroll position included)."""
    return [view.render_line(y).text for y in range(view.size.height)]


def hunk_rows(lines: list[str], header: str) -> tuple[int, int]:
    """(header row, row after the hunk's last code row) of the hunk with `header`, in drawn lines."""
    top = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith(header))
    end = top + 1
    while end < len(lines) and lines[end].strip() and not lines[end].lstrip().startswith(("@@", "💬")):
        end += 1
    return top, end


async def say(app, pilot, text: str) -> None:
    await pilot.press("c")
    await pilot.pause()
    assert isinstance(app.screen, TextPromptModal)
    app.screen.query_one(Input).value = text
    await pilot.press("enter")
    await pilot.pause()


async def test_a_hunk_comment_is_a_row_under_its_hunk_edited_and_deleted(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session, initial_file="pkg/calc.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        view = screen.diff_view
        header = view.file.hunks[0].header
        before = drawn(view)
        top, end = hunk_rows(before, header)
        assert not any("💬" in ln for ln in before[top + 1:])

        await say(app, pilot, "why None?\x1b[31m here")  # the cursor is on the header: on the whole hunk
        lines = drawn(view)
        assert lines[top + 1:end] == before[top + 1:end]  # the hunk's own rows did not move
        assert lines[end].strip() == "💬 why None?\\x1b[31m here"  # under the hunk, ESC made visible
        assert "\x1b" not in "".join(lines)
        assert lines[end + 1:end + 4] == before[end:end + 3]  # what followed the hunk follows the comment
        assert screen.query_one("#diff").rows[end].kind == "comment"

        await pilot.press("j", "j")  # on a line: a comment of that line, even though the hunk has one
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, TextPromptModal)
        line = view.current_line
        assert line is not None and app.screen.title_text == f"Comment on pkg/calc.py {header} line {line}"
        await pilot.press("escape")
        await pilot.press("k", "k")
        await pilot.pause()
        await say(app, pilot, "why None here?")  # c on a commented hunk: that comment, edited
        lines = drawn(view)
        assert lines[end].strip() == "💬 why None here?"
        assert sum("💬" in ln for ln in lines[top + 1:]) == 1  # one row (the header keeps its badge)
        assert [c.text for c in screen.ledger.state.comments("pkg/calc.py")] == ["why None here?"]

        await say(app, pilot, "")  # emptied: deleted, and its row with it
        assert drawn(view)[top + 1:] == before[top + 1:]
        assert screen.ledger.state.comments("pkg/calc.py") == []


async def test_a_line_comment_sits_under_its_line_and_a_long_one_wraps(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session, initial_file="pkg/calc.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        view = screen.diff_view
        await pilot.press("j", "j")  # onto `+    if a is None:` (branch line 2)
        await pilot.pause()
        assert view.current_line == 2
        words = " ".join(f"word{n:03}" for n in range(60))  # ~480 characters: more than a row
        await say(app, pilot, words)
        lines = drawn(view)
        y = next(i for i, ln in enumerate(lines) if "if a is None:" in ln)
        assert lines[y + 1].strip().startswith("💬 line 2: word000")
        comment = []
        for ln in lines[y + 1:]:
            if "return b" in ln:
                break
            comment.append(ln)
        assert len(comment) > 1 and all(len(ln) <= view.size.width for ln in comment)
        assert " ".join(" ".join(comment).split()).removeprefix("💬 line 2: ") == words  # every word shown
        # the cursor on a comment row names that comment: c edits it
        view.cursor = next(i for i, r in enumerate(view.rows) if r.kind == "comment")
        await pilot.press("c")
        await pilot.pause()
        assert app.screen.query_one(Input).value == words
        await pilot.press("escape")


async def test_comments_show_in_the_side_by_side_view_too(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session, initial_file="pkg/calc.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        view = screen.diff_view
        await say(app, pilot, "split me")
        await pilot.press("s")
        await pilot.pause()
        assert view.split
        lines = drawn(view)
        header = view.file.hunks[0].header
        top, end = hunk_rows(lines, header)
        assert lines[end].strip() == "💬 split me"
        assert "│" in lines[end - 1] and "│" not in lines[end]  # a full-width row, not a side


async def test_a_comment_saved_earlier_is_drawn_right_after_the_first_paint(awkward_session: ReviewSession,
                                                                            monkeypatch) -> None:
    # The saved state loads after the first paint (issue 16), but not as late as the whole
    # diff's parse or the findings: the file on screen gets its comments at once.
    earlier = awkward_session
    first = make_app(earlier)
    async with first.run_test(size=SIZE) as pilot:
        shown = (await review_ready(first, pilot)).diff_view.file
    assert shown is not None and shown.hunks
    earlier.evidence.state.add_comment(shown.path, shown.hunks[0].header, "seen before", None)
    earlier.evidence.state.save()
    session = ReviewSession.open(earlier.target.repo_dir, "agent/work")
    real = session.diff.preload
    monkeypatch.setattr(session.diff, "preload", lambda: (time.sleep(1.5), real())[1])
    monkeypatch.setattr(session, "findings", lambda bite=None: (time.sleep(1.5), [])[1])  # they redraw too
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await first_painted(app, pilot)
        assert not screen.startup.diff_loaded and not screen.ledger.findings_ready  # both still busy
        assert screen.diff_view.file is not None and screen.diff_view.file.path == shown.path
        assert "💬 seen before" in [ln.strip() for ln in drawn(screen.diff_view)]
