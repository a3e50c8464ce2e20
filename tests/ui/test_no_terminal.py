"""No terminal, no app: every command that would open the full-screen app refuses in one line, exit 2."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clirun import ROOT, run_cli
from tests.gitrepo import make_repo

ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def refused(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-500:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs a terminal" in lines[0], proc.stderr
    assert "reviewui check" in lines[0] and "reviewui demo --no-open" in lines[0]
    assert "\x1b[" not in proc.stdout  # nothing of the app was drawn


def test_demo_rebuild_with_stdout_redirected_refuses(tmp_path: Path) -> None:
    proc = run_cli("demo", "--rebuild", "--dir", str(tmp_path / "demo"), cwd=tmp_path, timeout=120)
    refused(proc)


def test_demo_with_piped_stdin_refuses_even_on_a_terminal_stdout(tmp_path: Path) -> None:
    """stdout a terminal, stdin a pipe: piped input must never become keystrokes."""
    main, child = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "reviewui", "demo", "1", "--dir", str(tmp_path / "demo")],
                              cwd=tmp_path, stdout=child, stderr=subprocess.PIPE,
                              input=b"a\r\r", timeout=120, env=ENV)
    finally:
        os.close(child)
    drawn = b""
    try:
        while chunk := os.read(main, 65536):
            drawn += chunk
    except OSError:
        pass  # the pty's other end is closed: everything is read
    os.close(main)
    stderr = proc.stderr.decode()
    assert proc.returncode == 2 and len(stderr.strip().splitlines()) == 1 and "needs a terminal" in stderr, stderr
    assert b"\x1b[?1049h" not in drawn  # the app never took over the screen


@pytest.mark.parametrize("args", [(), ("agent/work",)])
def test_open_without_a_terminal_refuses(tmp_path: Path, args: tuple[str, ...]) -> None:
    make_repo(tmp_path, {"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    if not args:
        subprocess.run(["git", "checkout", "-q", "agent/work"], cwd=tmp_path, check=True)
    refused(run_cli(*args, cwd=tmp_path))


def test_demo_no_open_still_builds_and_lists(tmp_path: Path) -> None:
    proc = run_cli("demo", "--no-open", "--dir", str(tmp_path / "demo"), cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "01-trim-reasoning" in proc.stdout


def test_an_app_drawn_by_another_driver_needs_no_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """textual-serve runs the app over pipes with its web driver named in TEXTUAL_DRIVER: no refusal there."""
    from reviewui.core.errors import ReviewError
    from reviewui.ui.app import require_terminal

    monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)
    with pytest.raises(ReviewError, match="needs a terminal"):
        require_terminal()  # pytest's stdout is no terminal
    monkeypatch.setenv("TEXTUAL_DRIVER", "textual.drivers.web_driver:WebDriver")
    require_terminal()
