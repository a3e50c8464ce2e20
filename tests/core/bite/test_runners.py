"""Runners as the project runs them (issue 39): unittest discovery in a src layout, a command that runs
no tests said as such, and pytest-xdist from addopts made to see the run's tree.

- A unittest suite inside its package in a src layout (`src/<pkg>/tests/`, modules with `load_tests`):
  a bare `python -m unittest` from the root discovers nothing there (`Ran 0 tests`, exit 0 on 3.11)
  and the garbage check then refused the command; discovery now starts where the package is imported
  from (`discover -s src -t src`).
- `Ran 0 tests` is "the command runs no tests" (a broken baseline, exit 3 as one JSON refusal).
- addopts `--numprocesses=auto`: xdist's workers are new interpreters that do not see the run's tree
  and paths ("No module named" the project: a false "baseline is broken" after a long wait); every
  run is made with `-n 0`, said once in the selection note.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewui.core.session import ReviewSession
from reviewui.core.test_layout import TestLayout, discovery_start, read_layout, uses_xdist
from reviewui.core.target import resolve_target
from tests.clirun import run_cli
from tests.core.bite.helpers import use_venv_python
from tests.gitrepo import make_repo

CALC = "def clamp(x):\n    return x\n"
CALC_BRANCH = "def clamp(x):\n    if x < 0:\n        return 0\n    return x\n"
LOAD_TESTS = (
    "import unittest\n\nfrom calcpkg.calc import clamp\n\n\n"
    "class ClampTest(unittest.TestCase):\n"
    "    def test_low(self):\n        self.assertEqual(clamp(-1), 0)\n\n"
    "    def test_mid(self):\n        self.assertEqual(clamp(3), 3)\n\n\n"
    "def load_tests(loader, tests, pattern):\n    return loader.loadTestsFromTestCase(ClampTest)\n"
)
SRC_UNITTEST = {"setup.cfg": "[metadata]\nname = calcpkg\n", "src/calcpkg/__init__.py": "",
                "src/calcpkg/calc.py": CALC, "src/calcpkg/tests/__init__.py": "",
                "src/calcpkg/tests/test_calc.py": LOAD_TESTS}
XDIST_CFG = "[tool.pytest.ini_options]\naddopts = \"--numprocesses=auto\"\ntestpaths = [\"tests\"]\n"
XDIST = {"pyproject.toml": XDIST_CFG, "src/xpkg/__init__.py": "", "src/xpkg/calc.py": CALC,
         "tests/test_calc.py": "from xpkg.calc import clamp\n\n\ndef test_mid():\n    assert clamp(3) == 3\n"}
XDIST_BRANCH = {"src/xpkg/calc.py": CALC_BRANCH, "tests/test_calc.py": XDIST["tests/test_calc.py"]
                + "\n\ndef test_low():\n    assert clamp(-1) == 0\n"}


def test_discovery_starts_where_the_suite_is_imported_from() -> None:
    files = {"src/p/__init__.py", "src/p/tests/__init__.py", "tests/__init__.py"}
    assert discovery_start(["src/p/tests/test_a.py", "src/p/tests/sub/test_b.py"], files | {
        "src/p/tests/sub/__init__.py"}) == "src"
    assert discovery_start(["tests/test_a.py"], files) == ""  # a package at the root: a bare run finds it
    assert discovery_start(["test_a.py"], files) == ""
    assert discovery_start(["checks/test_a.py"], files) == "checks"  # a plain folder: discovery starts in it
    assert discovery_start(["src/p/tests/test_a.py", "checks/test_a.py"], files) == ""  # two places: as before
    assert TestLayout(discovery="src").unittest_command == "python -m unittest discover -s src -t src"


def test_xdist_is_seen_in_addopts_and_commands() -> None:
    assert uses_xdist(["--numprocesses=auto"]) and uses_xdist(["-n", "4"]) and uses_xdist(["-nauto"])
    assert uses_xdist(["--tx", "popen"]) and uses_xdist(["-n", "0", "-n", "2"])
    assert not uses_xdist(["-n", "0"]) and not uses_xdist(["-n0"]) and not uses_xdist(["-p", "no:xdist", "-q"])
    # aio-libs/propcache's addopts: auto, then 0 ("slower with so few tests"): the last one wins, as in pytest
    assert not uses_xdist(["--numprocesses=auto", "--numprocesses=0", "--durations=10"])
    assert not uses_xdist(["-p", "xdist", "--dist", "load"])  # the plugin loaded, no worker asked for


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    use_venv_python(mp)
    for var in ("XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        mp.setenv(var, str(tmp_path_factory.mktemp(var.lower())))
    src = make_repo(tmp_path_factory.mktemp("src") / "repo", SRC_UNITTEST, {"src/calcpkg/calc.py": CALC_BRANCH})
    xdist = make_repo(tmp_path_factory.mktemp("xdist") / "repo", XDIST, XDIST_BRANCH)
    out = {
        "src": run_cli("bite", "agent/work", "--format", "json", cwd=src.root, timeout=600),
        "bare": run_cli("bite", "agent/work", "--format", "json", "--test-cmd", "python -m unittest", "--fresh",
                        cwd=src.root, timeout=600),
        "xdist": run_cli("bite", "agent/work", "--format", "json", cwd=xdist.root, timeout=600),
    }
    session = ReviewSession.open(xdist.root, "agent/work")
    out["xdist table"] = session.tests_table(session.bite())
    yield src, out
    mp.undo()


@pytest.mark.slow
def test_a_unittest_suite_in_a_src_layout_is_discovered_and_graded(runs) -> None:
    src, out = runs
    t = resolve_target(src.root, "agent/work")
    assert read_layout(src.root, t.base).discovery == "src"
    proc = out["src"]
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["test_command"] == "python -m unittest discover -s src -t src"
    assert doc["baseline"]["status"] == "green" and [h["verdict"] for h in doc["hunks"]] == ["bites"]


@pytest.mark.slow
def test_a_command_that_runs_no_tests_is_said_so_not_refused_by_the_garbage_check(runs) -> None:
    _, out = runs
    proc = out["bare"]
    assert proc.returncode == 3
    doc = json.loads(proc.stdout)
    assert doc["baseline"]["status"] == "broken"
    assert "the command runs no tests" in doc["refused"]["reason"]
    assert "instrument" not in doc["refused"]["reason"] and "garbage" not in proc.stderr


@pytest.mark.slow
def test_xdist_from_addopts_is_turned_off_and_said_once(runs) -> None:
    _, out = runs
    proc = out["xdist"]
    assert proc.returncode == 0, proc.stdout[-2000:]
    doc = json.loads(proc.stdout)
    assert doc["baseline"]["status"] == "green"
    assert doc["selection"].count("pytest-xdist off (-n 0)") == 1
    assert [h["verdict"] for h in doc["hunks"]] == ["bites"]
    table = out["xdist table"]
    assert table.status == "complete", table.reason
    assert {(r.id, r.base) for r in table.tests} == {("tests/test_calc.py::test_low", "fails")}


def test_no_wait_past_a_baseline_known_to_be_broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from reviewui.core.bite import prepare

    use_venv_python(monkeypatch)
    waited: list[bool] = []

    def slow_check(scratch, target, ctx, selected, limit, fresh=False):  # the side check, as long as a real one can be
        end = time.monotonic() + 120
        while time.monotonic() < end:
            if ctx.cancel is not None and ctx.cancel.is_set():
                waited.append(False)
                return None
            time.sleep(0.05)
        waited.append(True)
        return None

    monkeypatch.setattr(prepare, "side_checks", slow_check)
    rb = make_repo(tmp_path / "r", {"calc.py": CALC, "test_calc.py": "def test_x():\n    assert True\n"},
                   {"calc.py": CALC_BRANCH, "test_calc.py": "def test_x(:\n"})  # nothing can be collected
    session = ReviewSession.open(rb.root, "agent/work")
    session.run.jobs = 2
    start = time.monotonic()
    report = session.bite(guards=True)  # a slot for every job: the check runs beside the baseline
    assert report.baseline.status == "broken"
    assert time.monotonic() - start < 60 and waited == [False]


def test_a_baseline_broken_only_by_measuring_it_is_not_called_broken(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    # A cold measured baseline runs under `coverage run` (its command line says so): this conftest breaks it,
    # the plain command passes. The baseline is then the plain run's, without a coverage map, and said.
    conftest = "if b'coverage' in open('/proc/self/cmdline', 'rb').read():\n    raise RuntimeError('measured')\n"
    rb = make_repo(tmp_path / "r", {"pyproject.toml": "[tool.reviewui]\nwarm-runner = false\n", "calc.py": CALC,
                                    "conftest.py": conftest,
                                    "test_calc.py": "from calc import clamp\n\n\ndef test_mid():\n    assert clamp(3) == 3\n"},
                   {"calc.py": CALC_BRANCH, "test_calc.py": "from calc import clamp\n\n\ndef test_low():\n"
                                                            "    assert clamp(-1) == 0\n"})
    report = ReviewSession.open(rb.root, "agent/work").bite()
    assert report.baseline.status == "green", report.baseline.reason
    assert "the plain one green" in report.selection and not report.baseline.coverage_guided
    assert [r.verdict for r in report.results] == ["bites"]


def test_a_projects_own_coverage_threshold_never_fails_a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # aio-libs/yarl's shape: addopts load pytest-cov and its rcfile's fail_under fails any run short of the
    # whole suite ("Required test coverage of 98.95% not reached", exit 1, every test green): the null-revert
    # control then refused the command. Every run is made with --no-cov.
    use_venv_python(monkeypatch)
    cfg = "[pytest]\naddopts = -p pytest_cov --cov=calc --cov-fail-under=100\n"
    rb = make_repo(tmp_path / "r", {"pytest.ini": cfg, "calc.py": CALC + "\n\ndef unused():\n    return 1\n",
                                    "test_calc.py": "from calc import clamp\n\n\ndef test_mid():\n    assert clamp(3) == 3\n"},
                   {"calc.py": CALC_BRANCH + "\n\ndef unused():\n    return 1\n",
                    "test_calc.py": "from calc import clamp\n\n\ndef test_low():\n    assert clamp(-1) == 0\n"})
    report = ReviewSession.open(rb.root, "agent/work").bite()
    assert report.baseline.status == "green", report.baseline.reason
    assert [r.verdict for r in report.results] == ["bites"]
