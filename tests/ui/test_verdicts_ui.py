"""Marks, comments and verdicts from the keyboard; the note read back with plain git."""

from __future__ import annotations

import subprocess
import tomllib

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.screens.review import ReviewScreen
from reviewui.ui.screens.verdict import VerdictModal
from reviewui.ui.widgets.review_header import ReviewHeader
from tests.ui.ready import review_ready

SIZE = (140, 40)


def note(session: ReviewSession) -> dict:
    t = session.target
    text = subprocess.run(
        ["git", "notes", "--ref=reviewui", "show", t.head], cwd=t.repo_dir, capture_output=True, text=True, check=True
    ).stdout
    return tomllib.loads(text)


async def test_reject_with_reason_is_written_to_notes(awkward_session: ReviewSession) -> None:
    before = subprocess.run(["git", "status", "--porcelain"], cwd=awkward_session.target.repo_dir,
                            capture_output=True, text=True).stdout
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, VerdictModal)
        await pilot.press("enter")  # empty reason: refused for a reject
        await pilot.pause()
        assert isinstance(app.screen, VerdictModal)
        await pilot.press(*"fixture dodges the bug")
        await pilot.press("enter")
        await app.workers.wait_for_complete()  # the note is written in a worker
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        assert app.screen.query_one(ReviewHeader).verdict.startswith("rejected by Test Reviewer")
    reviews = note(awkward_session)["review"]
    assert [(r["verdict"], r["reason"]) for r in reviews] == [("reject", "fixture dodges the bug")]
    assert reviews[0]["head"] == awkward_session.target.head
    after = subprocess.run(["git", "status", "--porcelain"], cwd=awkward_session.target.repo_dir,
                           capture_output=True, text=True).stdout
    assert after == before


async def test_escape_cancels_the_verdict(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
    proc = subprocess.run(["git", "notes", "--ref=reviewui", "list"], cwd=awkward_session.target.repo_dir,
                          capture_output=True, text=True)
    assert proc.stdout.strip() == ""


async def test_space_marks_reviewed_and_comment_goes_into_the_verdict(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session, initial_file="pkg/calc.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await review_ready(app, pilot)
        header = screen.query_one(ReviewHeader)
        total = header.progress[1]
        assert total > 1 and header.progress[0] == 0
        await pilot.press("space")
        await pilot.pause()
        assert header.progress == (1, total)
        assert [b.text for b in screen.diff_view.badges[0]] == ["✓ reviewed"]
        await pilot.press("c")
        await pilot.pause()
        await pilot.press(*"why None?", "enter")
        await pilot.pause()
        # unreviewed hunks stand against the approve (issue 31): enter does not approve, the confirm key does
        await pilot.press("a", "enter")
        await pilot.pause()
        assert isinstance(app.screen, VerdictModal)
        await pilot.press("ctrl+y")
        await app.workers.wait_for_complete()  # the note is written in a worker
        await pilot.pause()
    review = note(awkward_session)["review"][0]
    assert review["verdict"] == "approve"
    assert [(c["file"], c["text"]) for c in review["comment"]] == [("pkg/calc.py", "why None?")]

    # marks persist across restarts
    app2 = make_app(ReviewSession.open(awkward_session.target.repo_dir, "agent/work"), initial_file="pkg/calc.py")
    async with app2.run_test(size=SIZE) as pilot:
        await review_ready(app2, pilot)
        assert app2.screen.query_one(ReviewHeader).progress == (1, total)


async def test_verdict_dialog_says_probe_results_in_words(awkward_session: ReviewSession) -> None:
    from textual.widgets import Static

    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        screen.ledger.state.keep_probe("test_edge", "def test_edge():\n    assert 0\n", {"branch": "failed", "base": "error"})
        screen.ledger.state.keep_probe("test_unrun", "def test_unrun():\n    assert 1\n")
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, VerdictModal)
        text = str(app.screen.query_one("#evidence-text", Static).render())
        assert "test_edge: fails on branch, errors on base" in text
        assert "test_unrun: not run" in text
        assert "{" not in text.split("Kept probes", 1)[1].split("Findings", 1)[0]


async def test_next_file_at_the_last_file_says_so(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        for _ in range(len(screen.file_list.paths) + 1):
            await pilot.press("]")
            await pilot.pause()
        assert screen.file_list.highlighted_path == screen.file_list.paths[-1]
        said = [n.message for n in app._notifications]
        assert any(m.startswith("last file") for m in said)


def test_bite_counts_read_as_words() -> None:
    from reviewui.ui.evidence_view import verdict_count

    assert [verdict_count(1, "bites"), verdict_count(2, "bites"), verdict_count(1, "toothless")] == [
        "1 bite", "2 bites", "1 toothless"]


async def test_approve_dialog_lists_what_stands_against_it(awkward_session: ReviewSession) -> None:
    from textual.widgets import Static

    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        for f in awkward_session.diff.files:  # every hunk reviewed: unreviewed hunks stand against an approve too
            for h in f.hunks:
                screen.ledger.state.mark(h.file, h.header, h.text)
        await pilot.press("a")
        await pilot.pause()
        text = str(app.screen.query_one("#evidence-text", Static).render())
        assert "Stands against" not in text  # nothing yet
        await pilot.press("escape")
        screen.ledger.state.keep_probe("test_edge", "def test_edge():\n    assert 0\n", {"branch": "failed", "base": "failed"})
        await pilot.press("x")
        await pilot.pause()
        await pilot.press(*"wrong")
        await pilot.press("enter")
        await app.workers.wait_for_complete()  # the verdict is written in a worker (issue 18)
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        text = str(app.screen.query_one("#evidence-text", Static).render())
        head = text.split("Approve this branch", 1)[0]
        assert "Stands against this approve (2):" in head
        assert "kept probe test_edge fails on both" in head
        assert "an earlier reject by Test Reviewer (this head)" in head


async def test_header_at_80x24_keeps_branch_progress_and_verdict(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=(80, 24)) as pilot:
        await review_ready(app, pilot)
        await pilot.press("x")
        await pilot.pause()
        await pilot.press(*"no")
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()  # the verdict's git work runs in a worker
        await pilot.pause()
        header = app.screen.query_one(ReviewHeader)
        line = header.render_line(0).text
        assert "agent/work" in line and "reviewed 0/" in line
        assert "rejected by Test" in line


async def test_a_comment_is_shown_on_its_hunk_and_c_edits_or_deletes_it(awkward_session: ReviewSession) -> None:
    from textual.widgets import Input

    from reviewui.ui.screens.text_prompt import TextPromptModal

    app = make_app(awkward_session, initial_file="pkg/calc.py")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        await pilot.press(*"why None?", "enter")
        await pilot.pause()
        assert "💬 why None?" in [b.text for b in screen.diff_view.badges[0]]
        await pilot.press("c")  # again on the same hunk: the comment, ready to edit
        await pilot.pause()
        assert isinstance(app.screen, TextPromptModal)
        field = app.screen.query_one(Input)
        assert field.value == "why None?"
        field.value = "why None here?"
        await pilot.press("enter")
        await pilot.pause()
        assert [c.text for c in screen.ledger.state.comments("pkg/calc.py")] == ["why None here?"]
        assert "💬 why None here?" in [b.text for b in screen.diff_view.badges[0]]
        await pilot.press("c")
        await pilot.pause()
        app.screen.query_one(Input).value = ""
        await pilot.press("enter")  # emptied: deleted
        await pilot.pause()
        assert screen.ledger.state.comments("pkg/calc.py") == []
        assert not any(b.text.startswith("💬") for b in screen.diff_view.badges.get(0, []))


async def test_reject_dialog_lists_an_earlier_approve(awkward_session: ReviewSession) -> None:
    from textual.widgets import Static

    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await review_ready(app, pilot)
        await pilot.press("x")
        await pilot.pause()
        text = str(app.screen.query_one("#evidence-text", Static).render())
        # issue 31: a reject with nothing against it says nothing misleading (no "nothing stands against")
        assert "Nothing stands against" not in text and "Stands against" not in text
        await pilot.press("escape")
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("ctrl+y")  # unreviewed hunks stand against the approve: the confirm key
        await app.workers.wait_for_complete()  # the verdict is written in a worker
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, VerdictModal)
        text = str(app.screen.query_one("#evidence-text", Static).render())
        head = text.split("Reject this branch", 1)[0]
        assert "Stands against this reject (1):" in head
        assert "✗ an earlier approve by Test Reviewer (this head)" in head
        assert "Nothing stands against" not in text
