"""The start-up runs without the cyclic garbage collector, and gets it back (issue 16)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import reviewui.cli
from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from tests.gitrepo import make_repo
from tests.ui.ready import first_painted

SIZE = (120, 30)


@pytest.fixture
def collector_off():
    """The collector off, as `reviewui open` leaves it before the app starts; on again afterwards."""
    gc.disable()
    yield
    gc.enable()


async def test_the_app_turns_the_paused_collector_back_on_after_its_first_paint(
        awkward_session: ReviewSession, collector_off: None) -> None:
    app = make_app(awkward_session, resume_gc=True)
    async with app.run_test(size=SIZE) as pilot:
        await first_painted(app, pilot)  # the paint itself, not a pause hoping it came
        assert app.screen.first_paint_at is not None
        assert gc.isenabled()


async def test_an_app_not_asked_to_resume_leaves_the_collector_alone(
        awkward_session: ReviewSession, collector_off: None) -> None:
    # Tests and embedders build the app with make_app: it only touches the collector when told to.
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await first_painted(app, pilot)
        assert app.screen.first_paint_at is not None
        assert not gc.isenabled()


def test_open_pauses_the_collector_until_the_app_runs_and_restores_it(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(tmp_path, {"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    monkeypatch.chdir(tmp_path)
    seen: list[tuple[bool, bool]] = []

    def fake_run_app(session: ReviewSession, initial_file: str | None = None, theme: str | None = None) -> None:
        seen.append((gc.isenabled(), session.diff.file("a.py") is not None))

    monkeypatch.setattr("reviewui.ui.app.run_app", fake_run_app)
    assert gc.isenabled()
    assert reviewui.cli.main(["open", "agent/work"]) == 0
    assert seen == [(False, True)]  # the session was opened and the app started with the collector off
    assert gc.isenabled()  # and on again once the app is gone


def test_a_bad_branch_leaves_the_collector_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    make_repo(tmp_path, {"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    monkeypatch.chdir(tmp_path)
    assert reviewui.cli.main(["open", "no/such-branch"]) == 2
    assert "no/such-branch" in capsys.readouterr().err
    assert gc.isenabled()


@pytest.mark.parametrize("paused", [True, False])
def test_run_app_asks_the_app_to_resume_only_a_paused_collector(awkward_session: ReviewSession, paused: bool,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[bool] = []

    class NotRun:
        available_themes = {"reviewui-dark": None}

        def run(self) -> None:
            pass

    def fake_make_app(session: ReviewSession, initial_file: str | None = None, theme: str | None = None,
                      resume_gc: bool = False) -> NotRun:
        asked.append(resume_gc)
        return NotRun()

    monkeypatch.setattr("reviewui.ui.app.make_app", fake_make_app)
    monkeypatch.setattr("reviewui.ui.app.require_terminal", lambda: None)  # pytest's stdout is no terminal
    from reviewui.ui.app import run_app

    if paused:
        gc.disable()
    try:
        run_app(awkward_session)
    finally:
        gc.enable()
    assert asked == [paused]


async def test_the_saved_state_is_not_read_while_the_first_screen_is_built(awkward_session: ReviewSession,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 16: the evidence ledger and the reviewer's state (and their imports) are not part of
    # building the first screen (its mount); the saved marks and comments are drawn right after.
    import time

    from reviewui.core.state import ReviewState
    from reviewui.ui.screens.review import ReviewScreen

    read_at: list[float] = []
    mounted_at: list[float] = []
    real_load, real_mount = ReviewState.load, ReviewScreen.on_mount

    def load(*args: object, **kwargs: object) -> ReviewState:
        read_at.append(time.perf_counter())
        return real_load(*args, **kwargs)  # type: ignore[arg-type]

    def on_mount(self: ReviewScreen) -> None:
        real_mount(self)
        mounted_at.append(time.perf_counter())

    monkeypatch.setattr(ReviewState, "load", load)
    monkeypatch.setattr(ReviewScreen, "on_mount", on_mount)
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await first_painted(app, pilot)
        assert len(mounted_at) == 1 and len(read_at) == 1
        assert read_at[0] > mounted_at[0]


async def test_the_first_frame_reads_no_evidence_its_keys_and_panes_ask_again_after(
        awkward_session: ReviewSession, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 44: drawing the first frame, the footer asked whether `w` means anything and the
    # results pane what the hunk under the cursor had, and each read the evidence ledger to
    # answer (its imports and the saved state's git call, on the way to the first paint).
    # They now answer from nothing read yet, and are asked again once the state is read.
    import time

    from reviewui.core.state import ReviewState
    from reviewui.ui.screens.review_startup import StartupPart

    read_at: list[float] = []
    painted_at: list[float] = []
    real_load, real_after = ReviewState.load, StartupPart.after_first_paint

    def load(*args: object, **kwargs: object) -> ReviewState:
        read_at.append(time.perf_counter())
        return real_load(*args, **kwargs)  # type: ignore[arg-type]

    async def after_first_paint(self: StartupPart) -> None:
        painted_at.append(time.perf_counter())
        await real_after(self)

    monkeypatch.setattr(ReviewState, "load", load)
    monkeypatch.setattr(StartupPart, "after_first_paint", after_first_paint)
    app = make_app(awkward_session)
    async with app.run_test(size=SIZE) as pilot:
        await first_painted(app, pilot)
        assert len(painted_at) == 1 and len(read_at) == 1
        assert read_at[0] > painted_at[0], "the evidence was read for the first frame"
