"""SIGKILL in the middle of a sweep: the reviewer's repo is untouched and the next run recovers by itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from reviewui.core.run.worktree import scratch_root
from tests.core.bite.helpers import load, use_venv_python
from tests.core.bite.test_bite_edges import alive, loop_repo

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[3]

SCRIPT = """
import sys
from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from reviewui.core.diff import load_diff
from reviewui.core.target import resolve_target
t = resolve_target(sys.argv[1], "agent/work")
run_bite(t, load_diff(str(t.repo_dir), t.base, t.head), Settings(warm_runner=sys.argv[2] == "warm"),
         timeout=120, jobs=1)
"""


def test_kill_9_mid_sweep_then_recover(tmp_path: Path, monkeypatch) -> None:
    """Cold runs: the killed sweep's run is left behind, and the next start kills it."""
    use_venv_python(monkeypatch)
    pidfile = tmp_path / "pids"
    rb = loop_repo(tmp_path / "r", pidfile)
    before = rb.snapshot()
    orphan, grandchild = _sweep_killed_mid_run(rb.root, pidfile, "cold")
    assert alive(orphan)  # left behind by the kill: the next start must deal with it
    assert rb.snapshot() == before

    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=False), timeout=3, jobs=1)
    assert rep.baseline.status == "green"
    assert [r.verdict for r in rep.results] == ["timeout"]
    assert not alive(orphan) and not alive(grandchild)
    assert rb.snapshot() == before
    # The crashed run's scratch was reused, not duplicated, and git knows only live scratches.
    root = scratch_root(rb.root)
    assert sorted(p.name for p in root.iterdir() if p.is_dir()) == ["0"]
    listed = rb.git("worktree", "list", "--porcelain")
    assert listed.count("worktree ") == 2 and "prunable" not in listed


def _kill_reviewui(proc: subprocess.Popen, run: int) -> None:
    os.kill(proc.pid, signal.SIGKILL)


def _sweep_killed_mid_run(
    repo: Path, pidfile: Path, mode: str, kill: Callable[[subprocess.Popen, int], None] = _kill_reviewui,
) -> tuple[int, int]:
    """Run a sweep in its own process, `kill` it once the reverted run is looping; (run, grandchild) pids."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(repo), mode], cwd=PROJECT, env=env)
    try:
        deadline = time.monotonic() + 60
        # Two lines: the baseline ran, and now the reverted (endlessly looping) run is in progress.
        while not (pidfile.exists() and len(pidfile.read_text().splitlines()) >= 2):
            assert proc.poll() is None, "the sweep ended before it could be killed"
            if time.monotonic() > deadline:
                raise AssertionError("the sweep never reached the reverted run")
            time.sleep(0.05)
        run, grandchild = (int(p) for p in pidfile.read_text().splitlines()[1].split())
        kill(proc, run)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    return run, grandchild


def test_kill_9_mid_warm_sweep_takes_the_run_with_it(tmp_path: Path, monkeypatch) -> None:
    """Warm runs: the server sees reviewui go and kills the run it forked, grandchildren too."""
    use_venv_python(monkeypatch)
    pidfile = tmp_path / "pids"
    rb = loop_repo(tmp_path / "r", pidfile)
    before = rb.snapshot()
    run, grandchild = _sweep_killed_mid_run(rb.root, pidfile, "warm")
    deadline = time.monotonic() + 10
    while (alive(run) or alive(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(run) and not alive(grandchild)
    assert rb.snapshot() == before


def _warm_servers_of(owner: int) -> list[int]:
    needle = f"REVIEWUI_WARM_OWNER={owner}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_warm_server_killed_with_reviewui_its_runs_die_at_the_next_start(tmp_path: Path, monkeypatch) -> None:
    """Both killed at once (no one left to clean up): the next start knows them by the owner's pid."""
    use_venv_python(monkeypatch)
    pidfile = tmp_path / "pids"
    rb = loop_repo(tmp_path / "r", pidfile)

    def kill_both(proc: subprocess.Popen, run: int) -> None:
        marked = _warm_servers_of(proc.pid)
        assert run in marked, (run, marked)  # the forked run carries its server's marker
        # Both at once: stopped first, so neither can react to the other's death
        # (reviewui kills the run when its server dies; the server, when reviewui does).
        both = [proc.pid, *(pid for pid in marked if pid != run)]
        for pid in both:
            os.kill(pid, signal.SIGSTOP)
        for pid in both:
            os.kill(pid, signal.SIGKILL)

    run, grandchild = _sweep_killed_mid_run(rb.root, pidfile, "warm", kill_both)
    time.sleep(0.5)
    assert alive(run), "the orphaned run died before the next start"  # nobody left to kill it
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), timeout=3, jobs=1)
    assert [r.verdict for r in rep.results] == ["timeout"], rep.results
    assert not alive(run) and not alive(grandchild)
