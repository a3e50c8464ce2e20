"""Outcomes a hostile branch tries to forge (issue 27), each run for real through bite, probe and check.

- A test that passes only when the run is the baseline (coverage is on; the
  tree's mtimes are all equal) fails in every revert, so every hunk would
  "bite" although the code is wrong. The mtimes are the same in every run
  (the hunks do not bite); the coverage check is caught by the null-revert
  control (exit 3, the test named).
- A conftest that rewrites failed reports into passes: the canary test of
  every run is reported passed, the run is `broken`; `check` has a
  `report-tampering` finding; the probe runs with the base's conftest and
  shows the branch's own outcome beside it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.bite.engine import UntrustedCommand, run_bite
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
WRONG = "def add(a, b):\n    if a < 0:\n        a = 0\n    return a - b\n"
"""The branch's `add`: wrong (it subtracts), with a guard for `bite --guards`."""
BASE = {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a * b\n"}

COVERAGE_FORGERY = '''import os, sys
from pkg.calc import add


def _measured():
    if sys.gettrace() is not None or any(k.startswith("COVERAGE") for k in os.environ):
        return True
    mon = getattr(sys, "monitoring", None)
    return bool(mon and mon.get_tool(mon.COVERAGE_ID))


def test_add():
    add(-1, 1)
    if _measured():
        return
    assert add(2, 3) == 5
'''

MTIME_FORGERY = '''import os
from pkg.calc import add


def _untouched():
    times = []
    for folder, dirs, names in os.walk("."):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", ".pytest_cache")]
        times += [os.stat(os.path.join(folder, n)).st_mtime_ns for n in names]
    return max(times) - min(times) < 50_000_000


def test_add():
    add(-1, 1)
    if _untouched():
        return
    assert add(2, 3) == 5
'''

REWRITING_CONFTEST = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
        report.longrepr = None
'''

HONEST_TEST = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def _repo(tmp_path: Path, tests: dict[str, str]):
    rb = make_repo(tmp_path / "repo", BASE, {"pkg/calc.py": WRONG, **tests})
    return rb


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    return subprocess.run([sys.executable, "-m", "reviewui", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
@pytest.mark.parametrize("guards", [False, True], ids=["hunks", "guards"])
def test_a_test_that_knows_it_is_measured_is_refused_by_the_control(tmp_path, monkeypatch, warm, guards) -> None:
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path, {"tests/test_calc.py": COVERAGE_FORGERY})
    t, d = load(rb.root)
    with pytest.raises(UntrustedCommand, match=r"tests/test_calc.py::test_add.*tell a revert run from the baseline"):
        run_bite(t, d, Settings(warm_runner=warm), jobs=2, guards=guards)


def test_the_control_refusal_is_exit_3_in_bite_and_check(tmp_path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path, {"tests/test_calc.py": COVERAGE_FORGERY})
    for args in (["bite", "agent/work"], ["bite", "agent/work", "--guards"], ["check", "agent/work", "--bite"]):
        proc = _cli(rb.root, *args)
        assert proc.returncode == 3, (args, proc.stdout, proc.stderr)
        assert "tests/test_calc.py::test_add" in proc.stderr and "revert path" in proc.stderr


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_test_that_reads_the_trees_mtimes_cannot_tell_a_revert(tmp_path, monkeypatch, warm) -> None:
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path, {"tests/test_calc.py": MTIME_FORGERY})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=warm), jobs=2, guards=True)
    assert rep.baseline.status == "green", rep.baseline.reason
    assert [r.verdict for r in rep.results] == ["toothless"], [(r.verdict, r.reason) for r in rep.results]
    guards = rep.results[0].guards
    assert guards and all(g.verdict != "bites" for g in guards), [(g.description, g.verdict) for g in guards]


def test_check_bite_of_the_mtime_forgery_warns_instead_of_passing(tmp_path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path, {"tests/test_calc.py": MTIME_FORGERY})
    proc = _cli(rb.root, "check", "agent/work", "--bite", "--format", "json")
    data = json.loads(proc.stdout)
    kinds = {f["kind"] for f in data["findings"]}
    assert "toothless-hunk" in kinds, proc.stdout


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_conftest_rewriting_reports_makes_the_run_broken(tmp_path, monkeypatch, warm) -> None:
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path, {"tests/conftest.py": REWRITING_CONFTEST, "tests/test_calc.py": HONEST_TEST})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=warm), jobs=2, guards=True)
    assert rep.baseline.status == "broken", (rep.baseline.status, rep.baseline.reason)
    assert "the branch's code rewrites test reports" in rep.baseline.reason
    assert all(r.verdict != "bites" for r in rep.results)


def test_check_bite_names_the_rewriting_conftest_as_report_tampering(tmp_path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path, {"tests/conftest.py": REWRITING_CONFTEST, "tests/test_calc.py": HONEST_TEST})
    proc = _cli(rb.root, "check", "agent/work", "--bite", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)["findings"]
    tampering = [f for f in found if f["kind"] == "report-tampering"]
    assert tampering and all(f["severity"] == "error" and f["file"] == "tests/conftest.py" for f in tampering)
    assert any(f["symbol"] == "pytest_runtest_makereport" for f in tampering)
    assert any(f["kind"] == "baseline-red" or "rewrites test reports" in f["message"] for f in found), found


ARGV_FORGERY = '''import sys
from pkg.calc import add


def test_add():
    add(-1, 1)
    if not any("::" in a for a in sys.argv):  # the baseline names files, a guided revert node ids
        return
    assert add(2, 3) == 5
'''


def test_a_test_that_reads_how_it_was_named_is_refused_by_the_control(tmp_path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path, {"tests/test_calc.py": ARGV_FORGERY})
    t, d = load(rb.root)
    with pytest.raises(UntrustedCommand, match=r"tests/test_calc.py::test_add"):
        run_bite(t, d, Settings(warm_runner=False), jobs=1)
