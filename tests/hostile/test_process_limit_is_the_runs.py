"""`process-limit` counts the run's own processes, not every process of the reviewer's user.

RLIMIT_NPROC set before bwrap makes the run's user namespace counts every process of
the uid, the namespace's parent level checked against the limit its creator had. An
ordinary reviewer with more processes than the limit (a browser, the test suite
itself: seen when CI ran the whole suite as an ordinary user) could not start a run
("sh: Cannot fork"). The limit is now set inside the namespace. As root the kernel
never counts processes (the run's cgroup does), so this bites as an ordinary user,
which CI runs too; the fork bomb still meets the limit either way.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.run import limits
from reviewui.core.run.runner import run_tests
from reviewui.core.run.warm_runner import WarmPytest

PY = sys.executable
LIMIT = 64

CHILDREN = '''import os


def test_a_few_children():
    kids = []
    for _ in range(5):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        kids.append(pid)
    assert all(os.waitpid(pid, 0)[1] == 0 for pid in kids)
'''

FORKS = '''import os, time


def test_fork_bomb():
    kids = []
    try:
        for _ in range(400):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            kids.append(pid)
    finally:
        for pid in kids:
            os.kill(pid, 9)
'''


@pytest.fixture
def many_processes_of_mine():
    """More processes of this user than the run's process limit, for the length of the test."""
    sleepers = [subprocess.Popen(["sleep", "300"]) for _ in range(LIMIT + 8)]
    yield
    for p in sleepers:
        p.kill()
        p.wait()


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_run_forks_below_its_limit_whatever_else_the_user_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, many_processes_of_mine: None, warm: bool) -> None:
    monkeypatch.setenv("REVIEWUI_PROCESS_LIMIT", str(LIMIT))
    limits._fitted.cache_clear()
    outcomes = {}
    server = WarmPytest(PY) if warm else None
    try:
        for name, test in (("children", CHILDREN), ("bomb", FORKS)):
            tree = tmp_path / name / "tree"
            tree.mkdir(parents=True)
            (tree / "test_it.py").write_text(test)
            outcomes[name] = run_tests(tree, [PY, "-m", "pytest", "-p", "no:xdist"], ["test_it.py"], 120, warm=server)
    finally:
        if server is not None:
            server.close()
        limits._fitted.cache_clear()
    run = outcomes["children"]
    assert run.returncode == 0 and run.limit is None, (run.limit, run.output[-800:])
    bomb = outcomes["bomb"]
    assert bomb.limit == "process limit" and not bomb.timed_out, (bomb.limit, bomb.returncode, bomb.output[-800:])
