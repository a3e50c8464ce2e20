"""ReviewReady comes once, after every start-up job; the screen's one check_action asks every part."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from textual.message import Message

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.messages import ReviewReady
from reviewui.ui.screens.review import ReviewScreen
from reviewui.ui.widgets.review_header import ReviewHeader
from tests.ui.ready import review_ready

SIZE = (150, 40)


@pytest.fixture
def sample3(tmp_path: Path) -> ReviewSession:
    built = build_sample("03-null-guard", tmp_path)
    # The verdict below is signed with the reviewer's git identity: the test brings its own
    # rather than relying on the machine's (a sandboxed run has no global git config).
    for key, value in (("user.name", "Test Reviewer"), ("user.email", "reviewer@example.com")):
        subprocess.run(["git", "config", key, value], cwd=built.repo_dir, check=True)
    return ReviewSession.open(built.repo_dir, "agent/null-guard")


@pytest.mark.parametrize("slow", ["link_transcript", "history"])
async def test_review_ready_once_after_the_start_up_settled(sample3: ReviewSession, monkeypatch, slow: str) -> None:
    s = sample3
    s.evidence  # noqa: B018 - load the state before the verdict below is recorded headless
    s.collect_findings()
    s.verdict("approve", "")
    seen: list[tuple[bool, bool, bool, str]] = []
    messages: list[Message] = []

    def hook(message: Message) -> None:
        # The hook sees the message at the screen and again where it bubbles to (the app).
        if isinstance(message, ReviewReady) and not any(m is message for m in messages):
            messages.append(message)
            screen = app.screen
            assert isinstance(screen, ReviewScreen)
            seen.append((screen.startup.diff_loaded, screen.ledger.findings_ready, screen.ledger.links is not None,
                         screen.query_one(ReviewHeader).verdict))

    session = ReviewSession.open(s.target.repo_dir, "agent/null-guard")
    # One job made the slowest by far: ReviewReady must wait for it, not race it.
    real = getattr(session, slow)
    monkeypatch.setattr(session, slow, lambda: (time.sleep(1.5), real())[1])
    monkeypatch.setattr(session, "findings", lambda bite=None: [])  # the quickest job done first
    app = make_app(session)
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        screen = await review_ready(app, pilot)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.startup.ready.is_set()
    assert len(seen) == 1
    diff_loaded, findings_ready, linked, verdict = seen[0]
    assert diff_loaded and findings_ready and linked
    assert verdict.startswith("approved by")


async def test_check_action_asks_every_part(sample3: ReviewSession) -> None:
    app = make_app(sample3)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        assert screen.check_action("findings", ()) is True
        assert screen.check_action("bite", ()) is True and screen.check_action("cancel_bite", ()) is False
        # a part that is not the bites part disables its own key: the screen listens
        screen.findings_part.check_action = lambda action: None if action == "findings" else True  # type: ignore[method-assign]
        assert screen.check_action("findings", ()) is None
        assert screen.check_action("bite", ()) is True


async def test_review_ready_when_the_transcript_turns_out_empty(sample3: ReviewSession, monkeypatch) -> None:
    monkeypatch.setattr(sample3, "transcript", lambda: None)
    app = make_app(sample3)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot, timeout=30)
        assert screen.startup.diff_loaded and screen.ledger.findings_ready  # the rest of the start-up ran
        assert screen.ledger.links is None
