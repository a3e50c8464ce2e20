"""Each limit a run hits is graded by its name, never as report tampering (issue 37).

A revert whose code forks 400 processes (past `process-limit`) or creates files past `file-limit`
is `broken` with the reason `process limit` / `file limit`: the run was stopped before its report
was written, which is no sign that the branch rewrites reports (the canary says nothing then).
Differential: the same code at the head (nothing reverted) passes, so the limit, not the code,
stopped the run. Run as root (the cgroup's pids count) and as a user (RLIMIT_NPROC) by `.ci/run`.
"""

from __future__ import annotations

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

FORKS = '''import os, time


def spawn(n):
    kids = []
    try:
        for _ in range(n):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            kids.append(pid)
    finally:
        for pid in kids:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    return len(kids)
'''

FILES = '''import os


def spawn(n):
    os.makedirs("many", exist_ok=True)
    for i in range(n):
        open(f"many/{i}", "w").close()
    return n
'''

TEST = "from pkg.work import spawn, count\n\n\ndef test_spawn():\n    assert spawn(count()) >= 0\n"


def _repo(root, body: str, n: int):
    # The base asks for n processes or files, the branch for 2: reverting the hunk asks for n again.
    return make_repo(root, {"pkg/__init__.py": "", "pkg/work.py": body + f"\n\ndef count():\n    return {n}\n"},
                     {"pkg/work.py": body + "\n\ndef count():\n    return 2\n", "tests/test_work.py": TEST})


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
@pytest.mark.parametrize(("body", "n", "limit"), [(FORKS, 400, "process limit"), (FILES, 3000, "file limit")],
                         ids=["processes", "files"])
def test_a_revert_past_a_limit_is_broken_by_that_limit(tmp_path, monkeypatch, warm: bool, body: str, n: int,
                                                       limit: str) -> None:
    use_venv_python(monkeypatch)
    monkeypatch.setenv("REVIEWUI_PROCESS_LIMIT", "128")
    monkeypatch.setattr("reviewui.core.run.limits.DEFAULT_FILES", 1000)
    from reviewui.core.run import limits

    limits._fitted.cache_clear()
    try:
        rb = _repo(tmp_path / "repo", body, n)
        t, d = load(rb.root)
        rep = run_bite(t, d, Settings(warm_runner=warm), jobs=1)
    finally:
        limits._fitted.cache_clear()
    assert rep.baseline.status == "green", rep.baseline.reason  # the head itself stays inside every limit
    [r] = [r for r in rep.results if r.file == "pkg/work.py"]
    assert (r.verdict, r.reason) == ("broken", limit), (r.verdict, r.reason)
