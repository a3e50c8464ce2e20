"""Verdicts that never lose work: git's setup checked as the dialog opens, drafts kept, approve confirmed."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from reviewui.core.findings.model import finding
from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.screens.review import ReviewScreen
from reviewui.ui.screens.verdict import VerdictModal
from tests.ui.ready import review_ready

SIZE = (140, 40)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def notes(session: ReviewSession) -> str:
    t = session.target
    return subprocess.run(["git", "notes", "--ref=reviewui", "list"], cwd=t.repo_dir,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def no_identity(awkward_session: ReviewSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ReviewSession:
    """The awkward repo with no git identity anywhere (and git told not to guess one)."""
    repo = awkward_session.target.repo_dir
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    git(repo, "config", "user.useConfigOnly", "true")
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(var, raising=False)
    return awkward_session


def text_of(app: object, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())  # type: ignore[attr-defined]


async def test_a_setup_problem_that_wraps_goes_on_under_its_own_text(no_identity: ReviewSession) -> None:
    app = make_app(no_identity)
    async with app.run_test(size=(60, 40)) as pilot:
        await review_ready(app, pilot)
        await pilot.press("x")
        await app.workers.wait_for_complete()  # the setup check runs in a worker
        await pilot.pause()
        box = app.screen.query_one("#setup", Static)
        lines = [box.render_line(y).text.rstrip() for y in range(box.size.height)]
    first = next(n for n, line in enumerate(lines) if line.startswith("  ✗ git has no email for you"))
    assert lines[first + 1].startswith("    ") and lines[first + 1][4] != " "
    assert "user.email" in lines[first + 1] or "user.email" in lines[first]


async def test_no_identity_is_said_before_typing_and_the_reason_is_kept(no_identity: ReviewSession) -> None:
    repo = no_identity.target.repo_dir
    app = make_app(no_identity)
    async with app.run_test(size=SIZE) as pilot:
        await review_ready(app, pilot)
        await pilot.press("x")
        await app.workers.wait_for_complete()  # the setup check runs in a worker
        await pilot.pause()
        assert isinstance(app.screen, VerdictModal)
        setup = text_of(app, "#setup")
        assert app.screen.query_one("#reason", Input).value == ""  # said before anything was typed
        assert "git has no email for you" in setup
        assert 'git config --global user.email "you@example.com"' in setup
        assert 'git config --global user.name "Your Name"' in setup
        await pilot.press(*"dodges the bug", "enter")
        await pilot.pause()
        assert isinstance(app.screen, VerdictModal)  # not recorded, not closed
        assert "git cannot record it yet" in text_of(app, "#verdict-error")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        git(repo, "config", "user.name", "Fixed Reviewer")  # the reviewer runs the line shown
        git(repo, "config", "user.email", "fixed@example.com")
        await pilot.press("x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.query_one("#reason", Input).value == "dodges the bug"  # the draft, offered again
        assert "git can record this verdict here" in text_of(app, "#setup")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
    assert notes(no_identity)


async def test_a_verdict_that_fails_to_record_keeps_its_reason(awkward_session: ReviewSession,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewui.core.errors import ReviewError

    def fail(*args: object, **kwargs: object) -> None:
        raise ReviewError("cannot update refs/notes/reviewui: the ref moved")

    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await review_ready(app, pilot)
        monkeypatch.setattr(ReviewSession, "verdict", fail)
        await pilot.press("x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "git can record this verdict here" in text_of(app, "#setup")
        await pilot.press(*"a long careful reason", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        said = " ".join(n.message for n in app._notifications)
        assert "the ref moved" in said and "your reason is kept" in said
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, VerdictModal)
        assert app.screen.query_one("#reason", Input).value == "a long careful reason"
        assert "the ref moved" in text_of(app, "#verdict-error")
    assert notes(awkward_session) == ""


async def test_approve_against_an_error_finding_needs_the_confirm_key(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        for f in awkward_session.diff.files:  # reviewed, so only the finding stands against it
            for h in f.hunks:
                screen.ledger.state.mark(h.file, h.header, h.text)
        screen.ledger.findings = [finding("test-only-change", "the branch changes tests and no source")]
        await pilot.press("a")
        await app.workers.wait_for_complete()
        await pilot.pause()
        evidence = text_of(app, "#evidence-text").split("Approve this branch", 1)[0]
        assert "Stands against this approve (1):" in evidence
        assert "error finding test-only-change" in evidence
        assert "ctrl+y approves anyway" in evidence
        footer = app.screen.query_one("ModalFooter").render()
        assert "Approve anyway" in str(footer)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, VerdictModal)  # enter did not approve
        assert "ctrl+y approves anyway" in text_of(app, "#verdict-error")
        assert notes(awkward_session) == ""
        await pilot.press("ctrl+y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
    assert notes(awkward_session)


async def test_unreviewed_hunks_stand_against_an_approve_never_a_reject(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await review_ready(app, pilot)
        total = sum(len(f.hunks) for f in awkward_session.diff.files)
        await pilot.press("a")
        await pilot.pause()
        text = text_of(app, "#evidence-text")
        assert f"{total} of {total} hunks not marked reviewed" in text
        assert "Nothing stands against" not in text
        await pilot.press("escape")
        await pilot.press("x")
        await pilot.pause()
        text = text_of(app, "#evidence-text")
        assert "not marked reviewed" not in text and "Nothing stands against" not in text
        footer = str(app.screen.query_one("ModalFooter").render())
        assert "Approve anyway" not in footer and "Record" in footer


async def test_a_setup_answer_that_comes_before_the_dialog_is_drawn_is_shown(awkward_session: ReviewSession) -> None:
    """Seen in a real terminal: git answered before the dialog mounted, and it said "checking…" for ever."""
    from reviewui.core.notes.preflight import SetupProblem
    from reviewui.ui.evidence_view import verdict_draft

    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        modal = VerdictModal(verdict_draft("reject", screen.ledger))
        modal.setup = (SetupProblem("git has no email for you", 'git config --global user.email "you@example.com"'),)
        await app.push_screen(modal)
        await pilot.pause()
        assert "git has no email for you" in text_of(app, "#setup")


@pytest.mark.parametrize(("config", "said", "fix"), [
    ({"gpg.format": "ssh", "user.signingkey": "/nonexistent/reviewer_key.pub"},
     "signing key file /nonexistent/reviewer_key.pub does not exist", "git config --global user.signingkey"),
    ({"gpg.format": "x509", "user.signingkey": "ABCDEF"}, "cannot sign reviews with gpg.format=x509",
     "git config --global gpg.format ssh"),
    ({"gpg.format": "openpgp", "user.signingkey": "ABCDEF", "gpg.program": "/nonexistent/gpg-missing"},
     "signing program '/nonexistent/gpg-missing' is not installed", "git config --global gpg.program"),
], ids=["ssh-key-missing", "x509", "gpg-missing"])
async def test_a_signing_setup_that_cannot_sign_is_said_when_the_dialog_opens(
        awkward_session: ReviewSession, config: dict[str, str], said: str, fix: str) -> None:
    repo = awkward_session.target.repo_dir
    for name, value in config.items():
        git(repo, "config", name, value)
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await review_ready(app, pilot)
        await pilot.press("x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        setup = text_of(app, "#setup")
        assert said in setup and fix in setup, setup


async def test_enter_after_running_the_fix_shown_records_without_reopening(no_identity: ReviewSession) -> None:
    """Seen at 80x24: the reviewer ran the dialog's own `git config` lines, and enter still refused."""
    import shlex

    app = make_app(no_identity)
    recorded = asyncio.Event()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await review_ready(app, pilot)
        on_recorded = screen.verdicts_part.on_recorded

        def note_recorded(message: object) -> None:
            on_recorded(message)  # type: ignore[arg-type]
            recorded.set()

        screen.verdicts_part.on_recorded = note_recorded  # type: ignore[method-assign]
        await pilot.press("x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, VerdictModal) and modal.setup
        await pilot.press(*"dodges the bug", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, VerdictModal) and "git cannot record it yet" in text_of(app, "#verdict-error")
        for problem in modal.setup:  # exactly the lines the dialog shows, run as a reviewer would
            assert problem.fix in text_of(app, "#setup")
            subprocess.run(shlex.split(problem.fix), cwd=no_identity.target.repo_dir, check=True,
                           capture_output=True)
        await pilot.press("enter")  # no escape, no reopening: enter asks git again and records
        await asyncio.wait_for(recorded.wait(), 30)
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
    assert notes(no_identity)


async def test_at_60x15_the_reason_box_is_whole_beside_a_setup_problem(no_identity: ReviewSession) -> None:
    """Walked at 60x15: the git fix lines took the room and the reason box lost its lower edge."""
    from textual.containers import Vertical

    app = make_app(no_identity)
    async with app.run_test(size=(60, 15)) as pilot:
        await review_ready(app, pilot)
        await pilot.press("a")
        await app.workers.wait_for_complete()
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, VerdictModal) and modal.setup
        frame = modal.query_one(Vertical).content_region
        reason = modal.query_one("#reason", Input).region
        assert reason.height == 3 and reason.y + reason.height <= frame.y + frame.height, (reason, frame)
        assert modal.query_one("#evidence").region.height >= 1  # some of the evidence is still in sight
