"""The UI and `reviewui verdict` record the same evidence for the same review (one builder: the ledger)."""

from __future__ import annotations

import subprocess
import tomllib

import pytest

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from tests.clirun import run_cli
from tests.ui.ready import review_ready
from tests.ui.test_bite_ui import SIZE, session  # noqa: F401 - the bite repo fixture
from tests.project_python import pytest_command

pytestmark = pytest.mark.slow

EVIDENCE = ("bite", "probe", "comment", "finding", "test")


def reviews(s: ReviewSession) -> list[dict]:
    t = s.target
    text = subprocess.run(["git", "notes", "--ref=reviewui", "show", t.head], cwd=t.repo_dir,
                          capture_output=True, text=True, check=True).stdout
    return tomllib.loads(text)["review"]


async def test_ui_and_headless_verdicts_carry_identical_evidence(session: ReviewSession) -> None:  # noqa: F811
    state = session.evidence.state
    calc = session.diff.file("calc.py")
    assert calc is not None
    state.add_comment("calc.py", calc.hunks[0].header, "why clamp at 0?", 2)
    state.keep_probe("test_neg", "def test_neg():\n    assert True\n", {"branch": "passed", "base": "failed"})
    state.save()

    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await review_ready(app, pilot)
        await pilot.press("B")
        await app.workers.wait_for_complete()  # the sweep
        await pilot.pause()
        await app.workers.wait_for_complete()  # the findings it started (toothless-hunk …)
        await pilot.pause()
        assert screen.ledger.bites and not screen.bites_part.biting
        await pilot.press("a", "ctrl+y")  # toothless and unreviewed hunks stand against it: the confirm key
        await app.workers.wait_for_complete()  # the note is written in a worker
        await pilot.pause()

    proc = run_cli("verdict", "agent/work", "approve", "--with-bites", "--test-cmd", pytest_command(),
                   cwd=session.target.repo_dir, timeout=300)
    assert proc.returncode == 0, proc.stderr

    ui, headless = reviews(session)
    for key in EVIDENCE:
        assert ui.get(key) == headless.get(key), key
    assert len(ui["bite"]) == 3 and ui["comment"] and ui["probe"]
    assert any(f["kind"] == "toothless-hunk" for f in ui["finding"])  # bite findings joined the verdict
