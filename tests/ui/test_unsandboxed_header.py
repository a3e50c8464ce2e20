"""Where agent code runs without bubblewrap (the reviewer opted in), the header says so in the error colour
and the verdict records the sandbox level."""

from __future__ import annotations

import subprocess
import tomllib

import pytest

from reviewui.core.run import sandbox
from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.widgets.review_header import ReviewHeader
from tests.ui.ready import review_ready

SIZE = (140, 40)


def _note(session: ReviewSession) -> dict:
    t = session.target
    text = subprocess.run(["git", "notes", "--ref=reviewui", "show", t.head], cwd=t.repo_dir,
                          capture_output=True, text=True, check=True).stdout
    return tomllib.loads(text)


@pytest.mark.parametrize("problem", [None, "user namespaces are off"], ids=["bwrap", "none"])
async def test_header_and_verdict_say_how_agent_code_runs(
    awkward_session: ReviewSession, monkeypatch: pytest.MonkeyPatch, problem: str | None
) -> None:
    monkeypatch.setattr(sandbox, "bwrap_problem", lambda: problem)
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await review_ready(app, pilot)
        header = app.screen.query_one(ReviewHeader)
        content = header.render()
        if problem is None:
            assert "UNSANDBOXED" not in content.plain
        else:
            start = content.plain.index("UNSANDBOXED")
            styles = [str(s.style) for s in content.spans if s.start <= start < s.end]
            assert any("$error" in s for s in styles), styles
        await pilot.press("a", "ctrl+y")  # unreviewed hunks stand against the approve: the confirm key (issue 31)
        await pilot.pause()
        await app.workers.wait_for_complete()  # the verdict's git work runs in a worker
    [review] = _note(awkward_session)["review"]
    assert review["sandbox"] == ("bwrap" if problem is None else "none")
