"""The verdict dialog says a hunk as the review says it: a revert that only removes a name is
counted by its guards (`6 guards bite, 1 toothless`), never as `broken` (seen at 80x24 in story 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.verdict_words import hunk_words
from reviewui.core.bite.report import HunkResult
from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample
from reviewui.ui.app import make_app
from reviewui.ui.screens.verdict import VerdictModal
from tests.ui.ready import review_ready

FILE = "coder/history.py"


def name_only(header: str, text: str) -> HunkResult:
    """Story 1's new function as a sweep grades it: the revert breaks every test, 6 guards bite, 1 does not."""
    guards = tuple(GuardResult(FILE, 0, 50 + n, "condition", f"guard {n}", "bites", failing_tests=("tests/t.py::test_a",))
                   for n in range(6))
    guards += (GuardResult(FILE, 0, 57, "condition", 'msg.role == "assistant"', "toothless"),)
    return HunkResult(FILE, 0, header, text, "broken", reason="every test errors: NameError", guards=guards)


@pytest.mark.parametrize("size", [(80, 24), (160, 40)], ids=["80x24", "160x40"])
async def test_the_evidence_line_of_a_name_only_hunk_says_its_guards(tmp_path: Path, size: tuple[int, int]) -> None:
    built = build_sample("01-trim-reasoning", tmp_path)
    session = ReviewSession.open(built.repo_dir, "agent/trim-reasoning")
    app = make_app(session)
    async with app.run_test(size=size) as pilot:
        screen = await review_ready(app, pilot)
        hunk = session.diff.file(FILE).hunks[0]
        screen.ledger.add_bite(name_only(hunk.header, hunk.text))
        await pilot.press("a")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, VerdictModal)
        text = str(app.screen.query_one("#evidence-text", Static).render())
        line = next(x.strip() for x in text.splitlines() if x.strip().startswith(f"{FILE} {hunk.header}:"))
        assert line == f"{FILE} {hunk.header}: 6 guards bite, 1 toothless (the revert only removes a name)", line
        assert "broken" not in line
        # what stands against the approve names the toothless guard itself
        assert f"{FILE}:57 condition guard is toothless" in text


def test_hunk_words_keep_every_other_verdict() -> None:
    plain = HunkResult(FILE, 0, "@@ -1 +1 @@", "", "broken", reason="syntax error")  # no guards: broken it is
    assert hunk_words(plain) == "broken"
    assert hunk_words(HunkResult(FILE, 0, "@@ -1 +1 @@", "", "bites")) == "bites"
