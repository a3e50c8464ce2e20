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
from reviewui.core.run.scratch_slots import scratch_root
from tests.core.bite.helpers import alive, load, marked, use_venv_python
from tests.core.bite.test_bite_edges import loop_repo, loop_tag

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
    """Cold runs: the killed sweep's run dies with it (bwrap --die-with-parent, own PID namespace),
    and the next start recovers the slot. (Before the sandbox the run was left behind until the
    next start killed it.)"""
    use_venv_python(monkeypatch)
    rb = loop_repo(tmp_path / "r")
    before = rb.snapshot()
    orphan, grandchild = _sweep_killed_mid_run(rb.root, "cold")
    deadline = time.monotonic() + 10
    while (alive(orphan) or alive(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(orphan) and not alive(grandchild)
    assert rb.snapshot() == before

    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=False), timeout=8, jobs=1)
    assert rep.baseline.status == "green"
    assert [r.verdict for r in rep.results] == ["timeout"]
    assert rb.snapshot() == before
    # The crashed run's slot was reused, not duplicated, and nothing is registered in the repo.
    root = scratch_root(rb.root)
    assert [p.name for p in root.iterdir() if p.name.endswith(".lock") and p.name[0].isdigit()] == ["0.lock"]
    # emptied on close: a run's files do not stay in the cache
    assert not [p for slot in (root / "slots").iterdir() for p in slot.iterdir()]
    listed = rb.git("worktree", "list", "--porcelain")
    assert listed.count("worktree ") == 1


def _kill_reviewui(proc: subprocess.Popen, run: int) -> None:
    os.kill(proc.pid, signal.SIGKILL)


def _sweep_killed_mid_run(
    repo: Path, mode: str, kill: Callable[[subprocess.Popen, int], None] = _kill_reviewui,
) -> tuple[int, int]:
    """Run a sweep in its own process, `kill` it once the reverted run is looping; (run, grandchild) host pids."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(repo), mode], cwd=PROJECT, env=env)
    tag = loop_tag(repo)
    try:
        deadline = time.monotonic() + 60
        # The baseline's grandchild lives a moment; the reverted (endlessly looping) run's stays.
        first_seen: dict[int, float] = {}
        while True:
            assert proc.poll() is None, "the sweep ended before it could be killed"
            if time.monotonic() > deadline:
                raise AssertionError("the sweep never reached the reverted run")
            now = time.monotonic()
            live = marked(tag)
            steady = [pid for pid in live if now - first_seen.setdefault(pid, now) > 1.5]
            if steady:
                grandchild = steady[0]
                run = live[grandchild]
                break
            time.sleep(0.05)
        kill(proc, run)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    return run, grandchild


def test_kill_9_mid_warm_sweep_takes_the_run_with_it(tmp_path: Path, monkeypatch) -> None:
    """Warm runs: the server's sandbox sees reviewui go and takes the run it forked, grandchildren too."""
    use_venv_python(monkeypatch)
    rb = loop_repo(tmp_path / "r")
    before = rb.snapshot()
    run, grandchild = _sweep_killed_mid_run(rb.root, "warm")
    deadline = time.monotonic() + 10
    while (alive(run) or alive(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(run) and not alive(grandchild)
    assert rb.snapshot() == before


def test_warm_server_killed_with_reviewui_its_runs_die_at_once(tmp_path: Path, monkeypatch) -> None:
    """Both killed at once (no one left to clean up): the PID namespace takes the run anyway.
    (Before the sandbox the orphaned run lived until the next start killed it.)"""
    use_venv_python(monkeypatch)
    rb = loop_repo(tmp_path / "r")

    def kill_both(proc: subprocess.Popen, run: int) -> None:
        server = int(Path(f"/proc/{run}/stat").read_text().rsplit(")", 1)[-1].split()[1])
        both = [proc.pid, server]
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in both:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:  # under load the forked run may already have ended its parent step
                    pass

    run, grandchild = _sweep_killed_mid_run(rb.root, "warm", kill_both)
    deadline = time.monotonic() + 10
    while (alive(run) or alive(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(run) and not alive(grandchild)
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), timeout=8, jobs=1)
    assert [r.verdict for r in rep.results] == ["timeout"], rep.results
