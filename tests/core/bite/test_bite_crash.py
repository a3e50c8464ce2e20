"""SIGKILL in the middle of a sweep: the reviewer's repo is untouched and the next run recovers by itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reviewui.core.bite import run_bite
from reviewui.core.config import Settings
from reviewui.core.worktree import scratch_root
from tests.core.bite.helpers import load, use_venv_python
from tests.core.bite.test_bite_edges import alive, loop_repo

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[3]

SCRIPT = """
import sys
from reviewui.core.bite import run_bite
from reviewui.core.config import Settings
from reviewui.core.diff import load_diff
from reviewui.core.target import resolve_target
t = resolve_target(sys.argv[1], "agent/work")
run_bite(t, load_diff(str(t.repo_dir), t.base, t.head), Settings(), timeout=120, jobs=1)
"""


def test_kill_9_mid_sweep_then_recover(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    pidfile = tmp_path / "pids"
    rb = loop_repo(tmp_path / "r", pidfile)
    before = rb.snapshot()
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(rb.root)], cwd=PROJECT, env=env)
    try:
        deadline = time.monotonic() + 60
        # Two lines: the baseline ran, and now the reverted (endlessly looping) run is in progress.
        while time.monotonic() < deadline:
            if pidfile.exists() and len(pidfile.read_text().splitlines()) >= 2:
                break
            assert proc.poll() is None, "the sweep ended before it could be killed"
            time.sleep(0.05)
        else:
            raise AssertionError("the sweep never reached the reverted run")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    orphan, grandchild = (int(p) for p in pidfile.read_text().splitlines()[1].split())
    assert alive(orphan)  # left behind by the kill: the next start must deal with it
    assert rb.snapshot() == before

    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), timeout=3, jobs=1)
    assert rep.baseline.status == "green"
    assert [r.verdict for r in rep.results] == ["timeout"]
    assert not alive(orphan) and not alive(grandchild)
    assert rb.snapshot() == before
    # The crashed run's scratch was reused, not duplicated, and git knows only live scratches.
    root = scratch_root(rb.root)
    assert sorted(p.name for p in root.iterdir() if p.is_dir()) == ["0"]
    listed = rb.git("worktree", "list", "--porcelain")
    assert listed.count("worktree ") == 2 and "prunable" not in listed
