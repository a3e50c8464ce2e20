"""No escape sequence from a file name, diff line or test output reaches the terminal.

The attack: a file named with an OSC 52 sequence (writes the reviewer's
clipboard) and one with an OSC 0 sequence (sets the window title), and a
test that prints both. Every assertion is on what the app actually draws:
the screen's composed strips and the bytes the driver would write.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from reviewui.core.session import ReviewSession, RunOptions
from reviewui.ui.app import make_app
from reviewui.ui.widgets.diff_view import DiffView
from reviewui.ui.widgets.file_list import FileList
from reviewui.ui.widgets.results_panel import ResultsPanel
from tests.gitrepo import make_repo
from tests.project_python import pytest_command

SIZE = (160, 40)
OSC52 = "\x1b]52;c;cHduZWQ=\x07"
TITLE = "\x1b]0;owned\x07"
CLIP_NAME = f"pkg/clip{OSC52}.py"
TITLE_NAME = f"pkg/title{TITLE}.py"
BIDI_NAME = "pkg/gnp.\u202eexe.py"


def screen_output(app) -> tuple[str, str]:
    """(the text of every composed strip, the bytes the driver would write for a full repaint)."""
    compositor = app.screen._compositor
    strips = compositor.render_strips()
    text = "\n".join("".join(seg.text for seg in strip) for strip in strips)
    return text, compositor.render_full_update().render_segments(app.console)


def assert_clean(text: str, terminal: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    # Styling escapes are the app's own; content sequences must be gone.
    assert "\x1b]52" not in terminal and "\x1b]0;" not in terminal and "\x07" not in terminal
    assert "\u202e" not in terminal


@pytest.fixture
def hostile(tmp_path: Path) -> ReviewSession:
    base = {"pkg/__init__.py": "", f"pkg/old{TITLE}.py": "V = 1\n" * 5}
    branch = {
        CLIP_NAME: f"X = '{OSC52}'\n",
        TITLE_NAME: "Y = 1\n",
        BIDI_NAME: "Z = 1\n",
        f"pkg/old{TITLE}.py": None,
        "pkg/renamed.py": "V = 1\n" * 5,
    }
    make_repo(tmp_path / "r", base, branch)
    return ReviewSession.open(tmp_path / "r", "agent/work")


async def test_hostile_file_names_are_drawn_escaped(hostile: ReviewSession) -> None:
    app = make_app(hostile, initial_file=CLIP_NAME)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        files = app.screen.query_one(FileList)
        listed = "\n".join(files.render_line(y).text for y in range(files.size.height))
        assert "clip\\x1b]52;c;cHduZWQ=\\x07.py" in listed and "title\\x1b]0;owned\\x07.py" in listed
        assert "gnp.\\u202eexe.py" in listed
        view = app.screen.query_one(DiffView)
        drawn = "\n".join(view.render_line(y).text for y in range(view.size.height))
        assert "X = '" in drawn and "\x1b" not in drawn
        assert_clean(*screen_output(app))
        for path in (TITLE_NAME, "pkg/renamed.py", BIDI_NAME):
            files.select_path(path)
            await pilot.pause()
            assert_clean(*screen_output(app))
        await pilot.press("F")
        await pilot.pause()
        assert_clean(*screen_output(app))


@pytest.mark.slow
async def test_test_output_in_a_bite_result_is_drawn_escaped(tmp_path: Path) -> None:
    base = {
        "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['.']\n",
        "calc.py": "def clamp(x):\n    return x\n",
        "tests/test_base.py": "def test_nothing():\n    assert True\n",
    }
    branch = {
        "calc.py": "def clamp(x):\n    if x < 0:\n        return 0\n    return x\n",
        "tests/test_calc.py": (
            "from calc import clamp\n\n\n"
            "def test_clamp():\n"
            f"    print({OSC52!r} + {TITLE!r})\n"
            f"    assert clamp(-1) == 0, {TITLE!r}\n"
        ),
    }
    make_repo(tmp_path / "r", base, branch)
    session = ReviewSession.open(tmp_path / "r", "agent/work", run=RunOptions(test_cmd=pytest_command()))
    app = make_app(session, initial_file="calc.py")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        await app.workers.wait_for_complete()
        await pilot.pause()
        result = next(iter(app.screen.ledger.bites.values()))
        assert result.verdict == "bites" and "\x1b]52" in result.output + "".join(result.messages.values())
        panel = app.screen.query_one(ResultsPanel)
        drawn = str(panel.query_one("#results-text", Static).render())
        assert "Captured stdout call" in drawn and "\\x1b]52;c;cHduZWQ=\\x07\\x1b]0;owned\\x07" in drawn
        assert "\x1b" not in drawn
        panel.scroll_end(animate=False)  # the output tail, where the printed sequences are
        await pilot.pause()
        text, terminal = screen_output(app)
        assert "\\x1b]52;c;cHduZWQ=\\x07\\x1b]0;owned\\x07" in text
        assert_clean(text, terminal)
