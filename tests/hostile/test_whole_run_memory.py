"""memory-limit holds for a run as a whole, with or without a cgroup (issue 37).

Eight children of 200 MiB each (1.6 GB resident) under `memory-limit = "256M"`: with a cgroup the
run is stopped by its memory count; without one (an ordinary user here, or REVIEWUI_NO_CGROUP=1) the
limit is split into a process cap times a per-process cap no larger than it, and the run is stopped
by one of them, graded by its name. Differential: the same test outside the sandbox passes. The
split is said once per command. `.ci/run` runs this as root and as `reviewui-ci`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.run import cgroup, limits, sandbox
from reviewui.core.run.command_types import host_program
from reviewui.core.run.runner import run_tests
from reviewui.core.run.warm_runner import WarmPytest
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

PY = sys.executable
PROJECT = Path(__file__).resolve().parents[2]

CHILDREN = '''import os, time, traceback


def test_eight_children():
    kids = []
    for _ in range(8):
        pid = os.fork()
        if pid == 0:
            try:
                hoard = bytearray(200 << 20)
                for i in range(0, len(hoard), 4096):
                    hoard[i] = 1
                time.sleep(2)
            except BaseException:
                traceback.print_exc()  # as a child a program forks says why it failed, and ends
                os._exit(1)
            os._exit(0)
        kids.append(pid)
    for pid in kids:
        assert os.waitpid(pid, 0)[1] == 0
'''


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "slot" / "tree"
    tree.mkdir(parents=True)
    (tree / "test_children.py").write_text(CHILDREN)
    return tree


def test_outside_the_sandbox_eight_children_of_200m_pass(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    done = subprocess.run([PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "test_children.py"],
                          cwd=tree, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-1500:]


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
@pytest.mark.parametrize("group", [True, False], ids=["cgroup-if-any", "no-cgroup"])
def test_eight_children_of_200m_do_not_pass_a_256m_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         warm: bool, group: bool) -> None:
    monkeypatch.setenv("REVIEWUI_MEMORY_LIMIT", "256M")
    if not group:
        monkeypatch.setenv("REVIEWUI_NO_CGROUP", "1")
    cgroup._parents.cache_clear()
    limits._fitted.cache_clear()
    python = host_program(PY)
    assert python is not None
    server = WarmPytest(python) if warm else None
    try:
        if not group:
            each, count = cgroup.per_process(sandbox.limits())
            assert each * count <= 256 << 20 and count >= 1
        run = run_tests(_tree(tmp_path), [PY, "-m", "pytest", "-p", "no:xdist"], ["test_children.py"], 120,
                        warm=server)
    finally:
        if server is not None:
            server.close()
        monkeypatch.undo()
        cgroup._parents.cache_clear()
        limits._fitted.cache_clear()
    assert run.warm == warm
    assert run.returncode != 0 and run.limit in ("memory limit", "process limit"), \
        (run.limit, run.returncode, run.output[-1500:])


def test_the_split_is_said_once_per_command(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n"},
                   {"pkg/calc.py": "def add(a, b):\n    return a + b\n",
                    "tests/test_calc.py": "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"})
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "REVIEWUI_NO_CGROUP": "1", "REVIEWUI_MEMORY_LIMIT": "2G",
           "PATH": f"{Path(PY).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([PY, "-m", "reviewui", "bite", "agent/work", "--format", "json"], cwd=rb.root, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["limits"] == "per-process"
    said = [ln for ln in done.stderr.splitlines() if "holds for each run as a whole" in ln]
    assert len(said) == 1 and "memory-limit 2G" in said[0] and "16 processes" in said[0], done.stderr
