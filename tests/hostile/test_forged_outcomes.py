"""Outcomes a hostile branch tries to forge (issue 27), each run for real through bite, probe and check.

- A test that passes only when the run is the baseline (coverage is on; the
  tree's mtimes are all equal) fails in every revert, so every hunk would
  "bite" although the code is wrong. The mtimes are the same in every run
  (the hunks do not bite); coverage is out of every test's sight (the
  forgery fails at head, the baseline is red); a test that still tells the
  baseline (by the plugin pytest loaded for it) is caught by the null-revert
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

PLUGIN_FORGERY = '''import os
from pkg.calc import add


def test_add(request):
    add(-1, 1)
    if os.path.exists("/reviewui/io/run/cov/rcfile"):
        return  # the measured baseline's coverage files: still in the run's sight, so the control must catch it
    assert add(2, 3) == 5
'''
"""A test that tells the baseline by the files reviewui's run directory holds for it (coverage
itself, and since every run loads every reviewui plugin, the plugins loaded for it are out of its
sight): the null-revert control is what stops it. (Was: by `hasplugin("reviewui_covctx")`, which
every run now has.)"""

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
def test_a_test_looking_for_coverage_cannot_see_it_and_fails_at_head(tmp_path, monkeypatch, warm, guards) -> None:
    # Was: refused by the null-revert control (exit 3). Coverage's variables, tracer and modules are
    # now out of every test's sight (origin.py): the forgery asserts in the baseline too, and the
    # wrong `add` is caught there.
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path, {"tests/test_calc.py": COVERAGE_FORGERY})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=warm), jobs=2, guards=guards)
    assert rep.baseline.status == "red", rep.baseline.reason
    assert "tests/test_calc.py::test_add" in rep.baseline.reason and "assert -1 == 5" in rep.baseline.reason
    assert not any(r.verdict == "bites" for r in rep.results)
    assert not any(g.verdict == "bites" for r in rep.results for g in r.guards)


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
@pytest.mark.parametrize("guards", [False, True], ids=["hunks", "guards"])
def test_a_test_that_knows_it_is_measured_is_refused_by_the_control(tmp_path, monkeypatch, warm, guards) -> None:
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path, {"tests/test_calc.py": PLUGIN_FORGERY})
    t, d = load(rb.root)
    with pytest.raises(UntrustedCommand, match=r"tests/test_calc.py::test_add.*tell a revert run from the baseline"):
        run_bite(t, d, Settings(warm_runner=warm), jobs=2, guards=guards)


def test_the_control_refusal_is_exit_3_in_bite_and_check(tmp_path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path, {"tests/test_calc.py": PLUGIN_FORGERY})
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
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_conftest_rewriting_reports_is_caught_by_the_canary(tmp_path, monkeypatch, warm, jobs) -> None:
    """The baseline's canary passed: the sweep refuses the command before any revert is graded."""
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path, {"tests/conftest.py": REWRITING_CONFTEST, "tests/test_calc.py": HONEST_TEST})
    t, d = load(rb.root)
    with pytest.raises(UntrustedCommand, match=r"the branch's code rewrites test reports: a deliberately failing "
                                               r"test \(test_[0-9a-f]{16}\) was passed"):
        run_bite(t, d, Settings(warm_runner=warm), jobs=jobs, guards=True)


def test_a_revert_run_whose_canary_passes_is_broken(tmp_path, monkeypatch) -> None:
    """A conftest that rewrites reports only once the code changed (a revert run) is caught per run."""
    use_venv_python(monkeypatch)
    sneaky = REWRITING_CONFTEST.replace("    if report.failed:", "    import pkg.calc, inspect\n"
                                        "    if report.failed and 'a - b' not in inspect.getsource(pkg.calc):")
    rb = _repo(tmp_path, {"tests/conftest.py": sneaky, "tests/test_calc.py": HONEST_TEST.replace("5", "-1")})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=False), jobs=1)
    assert rep.baseline.status == "green", rep.baseline.reason
    [r] = rep.results
    assert r.verdict == "broken" and "the branch's code rewrites test reports" in r.reason, (r.verdict, r.reason)


def test_check_bite_names_the_rewriting_conftest_as_report_tampering(tmp_path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path, {"tests/conftest.py": REWRITING_CONFTEST, "tests/test_calc.py": HONEST_TEST})
    proc = _cli(rb.root, "check", "agent/work", "--bite", "--format", "json")
    assert proc.returncode == 3, proc.stderr  # the bites taught nothing: the canary passed
    assert "rewrites test reports" in proc.stderr
    found = json.loads(proc.stdout)["findings"]
    tampering = [f for f in found if f["kind"] == "report-tampering"]
    assert tampering and all(f["severity"] == "error" and f["file"] == "tests/conftest.py" for f in tampering)
    assert any(f["symbol"] == "pytest_runtest_makereport" for f in tampering)


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


GUARD_FORK_FORGERY = '''import os, sys
from pkg.calc import add


def test_add():
    add(-1, 1)
    # (was: `"reviewui_guard_batch" in sys.modules`, which every run now has)
    if not ("REVIEWUI_GUARD_BATCH" in os.environ or os.path.exists("/reviewui/io/run/batch.json")):
        return  # anywhere but a guard batch: pass
    assert add(2, 3) == 5
'''


def test_a_test_that_knows_it_runs_in_a_guard_batch_is_refused(tmp_path, monkeypatch) -> None:
    """The guard batch's forks are a revert path of their own: a null guard must stay green there too."""
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path, {"tests/test_calc.py": GUARD_FORK_FORGERY})
    t, d = load(rb.root)
    with pytest.raises(UntrustedCommand, match=r"tests/test_calc.py::test_add.*guard"):
        rep = run_bite(t, d, Settings(warm_runner=False), jobs=2, guards=True)
        pytest.fail(f"graded: {[(g.description, g.verdict) for r in rep.results for g in r.guards]}")
