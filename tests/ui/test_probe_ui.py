"""The probe editor from the keyboard: type a probe, run it on branch and base, keep, export, close."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.app import App
from textual.widgets import Static, TextArea

from reviewui.core.probe.run import load_draft
from reviewui.core.session import ReviewSession, RunOptions
from reviewui.core.state import ReviewState
from reviewui.core.run.scratch_slots import scratch_root
from reviewui.demo import build_sample
from reviewui.ui.bindings import key_actions
from reviewui.ui.screens.probe import ProbeScreen
from reviewui.ui.screens.text_prompt import TextPromptModal
from tests.project_python import pytest_command

pytestmark = pytest.mark.slow
SIZE = (140, 44)

PASTED = (
    "from coder.history import NUDGE, Message, ToolCall, clear_truncated_reasoning\n\n\n"
    "def test_p():\n"
    '    m = [Message("assistant", reasoning="waste"), Message("user", NUDGE), '
    'Message("assistant", reasoning="short", tool_calls=[ToolCall("c", "t")])]\n'
    "    clear_truncated_reasoning(m)\n"
)
TYPED = '    assert m[2].reasoning == "short", "[b]x[/b] kept?"\n'
PROBE = PASTED + TYPED


@pytest.fixture
def session(tmp_path: Path) -> ReviewSession:
    built = build_sample("01-trim-reasoning", tmp_path / "samples")
    return ReviewSession.open(built.repo_dir, "agent/trim-reasoning",
                              run=RunOptions(test_cmd=pytest_command()))


class Host(App[None]):
    """A bare app holding only the probe screen, so the test does not depend on the review screen."""

    def __init__(self, first: ProbeScreen) -> None:
        super().__init__()
        self.first = first

    def on_mount(self) -> None:
        self.push_screen(self.first)


def text_of(screen: ProbeScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def type_text(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press(*["enter" if ch == "\n" else ch for ch in text])


async def test_type_a_probe_run_keep_export_and_close(session: ReviewSession, tmp_path: Path) -> None:
    hunk = session.diff.file("coder/history.py").hunks[0]
    state = ReviewState.load(session.target.repo_dir, session.target.branch)
    app = Host(ProbeScreen(session, hunk, state))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ProbeScreen)
        editor = screen.query_one("#probe-editor", TextArea)
        assert "from coder.history import clear_truncated_reasoning" in editor.text  # the template
        assert editor.has_focus

        await pilot.press("f7", "backspace")  # select all, delete
        app.post_message(events.Paste(PASTED))  # the setup pasted as a terminal would; the assert typed
        await pilot.pause()
        await type_text(pilot, TYPED)
        assert editor.text == PROBE
        await pilot.press("ctrl+r")
        assert screen.running
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not screen.running
        branch, base = text_of(screen, "#outcome-branch"), text_of(screen, "#outcome-base")
        assert "FAILED" in branch and "test_p" in branch
        assert "[b]x[/b] kept?" in branch  # markup in a message is shown, not obeyed
        assert "ERROR" in base and "clear_truncated_reasoning" in base
        summary = text_of(screen, "#probe-summary")
        assert summary.startswith("fails on branch, errors on base: the name does not exist there")
        assert screen.query_one("#outcome-reverted", Static).has_class("-hidden")

        await pilot.press("ctrl+s")
        kept = ReviewState.load(session.target.repo_dir, session.target.branch).probes()
        assert [(p.name, p.code, p.outcomes) for p in kept] == [("test_p", PROBE, {"branch": "failed", "base": "error"})]

        await pilot.press("ctrl+b")
        await app.workers.wait_for_complete()
        await pilot.pause()
        reverted = screen.query_one("#outcome-reverted", Static)
        assert not reverted.has_class("-hidden") and "ERROR" in str(reverted.render())
        assert "the hunk defines what the probe imports" in text_of(screen, "#probe-summary")

        # issue 16: the reviewed branch is not the one checked out (main is), so export writes a
        # patch against the branch under the git dir and leaves the checkout alone
        dest = session.target.repo_dir / "x" / "t.py"
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert isinstance(app.screen, TextPromptModal)
        from textual.widgets import Input

        assert app.screen.query_one(Input).value == "tests/test_p.py"  # the default, ready for enter
        app.screen.query_one(Input).value = "x/t.py"
        await pilot.press("enter")
        await pilot.pause()
        assert not dest.exists()
        patch = session.target.git_dir / "reviewui" / "exports" / "agent-trim-reasoning-t.patch"
        assert "+++ b/x/t.py" in patch.read_text() and "+def test_p():" in patch.read_text()
        assert str(patch) in text_of(screen, "#probe-summary") and "not checked out" in text_of(screen, "#probe-summary")
        import subprocess

        repo = session.target.repo_dir
        assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout == ""
        subprocess.run(["git", "checkout", "-q", "agent/trim-reasoning"], cwd=repo, check=True)
        subprocess.run(["git", "apply", str(patch)], cwd=repo, check=True)
        assert dest.read_text() == PROBE
        subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=repo, check=True)
        dest.unlink()
        assert app.screen is screen

        await pilot.press("#")  # an edit after the last run: closing keeps it as the draft
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ProbeScreen)
    assert load_draft(state.path, f"{hunk.file}:{hunk.index}") == PROBE + "#"


async def test_syntax_error_is_shown_with_its_line_and_nothing_runs(session: ReviewSession) -> None:
    state = ReviewState.load(session.target.repo_dir, session.target.branch)
    app = Host(ProbeScreen(session, None, state))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ProbeScreen)
        assert screen.check_action("run_reverted", ()) is None  # no hunk: nothing to revert
        described = {k.action: k.description for k in key_actions(screen)}
        assert {"run": "Run probe", "run_reverted": "Run, hunk reverted", "keep": "Keep", "export": "Export",
                "close": "Close"}.items() <= described.items()
        editor = screen.query_one("#probe-editor", TextArea)
        editor.text = "def test_a():\n    x = 1\n    assert x ==\n"
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert not screen.running
        assert text_of(screen, "#probe-summary").startswith("probe line 3: ")
        assert editor.cursor_location == (2, 0)
        assert "not run yet" in text_of(screen, "#outcome-branch")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert ReviewState.load(session.target.repo_dir, session.target.branch).probes() == []
        await pilot.press("escape")
        await pilot.pause()
        # Reopened, the editor holds the draft, not a fresh template.
        await app.push_screen(ProbeScreen(session, None, state))
        await pilot.pause()
        assert app.screen.query_one("#probe-editor", TextArea).text == "def test_a():\n    x = 1\n    assert x ==\n"
    assert not scratch_root(session.target.repo_dir).exists()


async def test_export_on_enter_writes_the_default_path_on_the_checked_out_branch(session: ReviewSession) -> None:
    import subprocess

    repo = session.target.repo_dir
    subprocess.run(["git", "checkout", "-q", "agent/trim-reasoning"], cwd=repo, check=True)
    state = ReviewState.load(repo, session.target.branch)
    app = Host(ProbeScreen(session, None, state))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.query_one("#probe-editor", TextArea).text = "def test_mine():\n    assert 1 + 1 == 2\n"
        await pilot.press("ctrl+e")
        await pilot.pause()
        await pilot.press("enter")  # nothing typed: the suggested path is taken
        await pilot.pause()
        dest = repo / "tests" / "test_mine.py"
        assert dest.read_text() == "def test_mine():\n    assert 1 + 1 == 2\n"
        assert f"probe exported to {dest}" in text_of(screen, "#probe-summary")


async def test_the_untouched_template_cannot_be_run_kept_or_exported(session: ReviewSession) -> None:
    hunk = session.diff.file("coder/history.py").hunks[0]
    state = ReviewState.load(session.target.repo_dir, session.target.branch)
    app = Host(ProbeScreen(session, hunk, state))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        editor = screen.query_one("#probe-editor", TextArea)
        assert 'assert False, "write the probe"' in editor.text
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert not screen.running and screen.last is None
        summary = text_of(screen, "#probe-summary")
        assert "still the template" in summary
        stub_line = editor.text.splitlines().index('    assert False, "write the probe"')
        assert editor.cursor_location == (stub_line, 0)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert ReviewState.load(session.target.repo_dir, session.target.branch).probes() == []
        assert "not kept" in text_of(screen, "#probe-summary")
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert app.screen is screen  # no export prompt for the template
