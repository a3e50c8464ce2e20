"""The app's status line counts a long baseline's tests as they run (issue 39): a coalescing message."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.messages import TestsProgressed
from tests.core.bite.helpers import use_venv_python
from tests.core.bite.test_progress import N, many_repo
from tests.ui.ready import review_ready


async def test_the_status_line_counts_the_baselines_tests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    rb = many_repo(tmp_path / "r")
    seen: list[TestsProgressed] = []

    def hook(message: object) -> None:
        if isinstance(message, TestsProgressed):
            seen.append(message)

    app = make_app(ReviewSession.open(rb.root, "agent/work"))
    async with app.run_test(size=(160, 40), message_hook=hook) as pilot:
        screen = await review_ready(app, pilot)
        said: list[str] = []
        real = screen.set_status
        monkeypatch.setattr(screen, "set_status", lambda text, *a, **k: (said.append(str(text)), real(text, *a, **k)))
        await pilot.press("B")
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert any(m.progress.phase == "baseline" and m.progress.total == N + 1 for m in seen)
    assert any(s.startswith("bite-check: baseline: ") and f"/{N + 1} tests, " in s for s in said), said[:5]
    assert TestsProgressed(seen[0].progress).can_replace(seen[-1])  # only the newest matters
