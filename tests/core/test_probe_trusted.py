"""Probes run as bite runs do (issue 32) and with reports the branch cannot rewrite (issue 27).

- a src-layout project imports on branch, base and reverted runs;
- a probe that cannot import says which module and which import roots were searched;
- a branch conftest that rewrites failures into passes: the probe runs with the base's
  conftest (the trusted outcome), and beside it with the branch's own, whose canary
  passed, so that run is `broken`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.probe.run import run_probe
from reviewui.core.session import ReviewSession, RunOptions
from tests.gitrepo import make_repo
from tests.project_python import pytest_command

pytestmark = pytest.mark.slow
PYTEST = pytest_command()
PROJECT = Path(__file__).resolve().parents[2]

SRC_BASE = {"src/shop/__init__.py": "", "src/shop/cart.py": "def total(xs):\n    return sum(xs)\n",
            "tests/test_cart.py": "from shop.cart import total\n\n\ndef test_total():\n    assert total([1]) == 1\n"}
SRC_BRANCH = {"src/shop/cart.py": "def total(xs):\n    if not xs:\n        return 0\n    return sum(xs) + 1\n"}
SRC_PROBE = "from shop.cart import total\n\n\ndef test_total_of_two():\n    assert total([1, 2]) == 3\n"

REWRITING_CONFTEST = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome = "passed"
        report.longrepr = None
'''
MUL_BASE = {"calc.py": "def mul(a, b):\n    return a * b\n", "tests/conftest.py": "",
            "tests/test_calc.py": "from calc import mul\n\n\ndef test_mul():\n    assert mul(1, 1) == 1\n"}
MUL_BRANCH = {"calc.py": "def mul(a, b):\n    return a + b\n", "tests/conftest.py": REWRITING_CONFTEST}
MUL_PROBE = "from calc import mul\n\n\ndef test_mul_2_3():\n    assert mul(2, 3) == 6\n"


def _session(root: Path) -> ReviewSession:
    return ReviewSession.open(root, "agent/work", run=RunOptions(test_cmd=PYTEST))


def test_a_src_layout_probe_imports_the_project_on_branch_base_and_revert(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", SRC_BASE, SRC_BRANCH)
    report = run_probe(_session(rb.root), SRC_PROBE, hunk=("src/shop/cart.py", 0))
    assert (report.branch.status, report.base.status) == ("failed", "passed"), report.render_text()
    assert report.reverted is not None and report.reverted.status == "passed", report.render_text()
    assert "No module named" not in report.render_text()


def test_a_probe_that_cannot_import_names_the_module_and_the_roots(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", SRC_BASE, SRC_BRANCH)
    report = run_probe(_session(rb.root), "from shopx.cart import total\n\n\ndef test_x():\n    assert total([]) == 0\n")
    assert report.branch.status == "error"
    summary = report.summary()
    assert "fix the probe" not in summary
    assert "shopx" in summary and "src" in summary and "import roots searched" in summary, summary


def test_a_conftest_rewriting_failures_cannot_forge_the_probe(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", MUL_BASE, MUL_BRANCH)
    report = run_probe(_session(rb.root), MUL_PROBE)
    assert report.branch.status == "failed", report.render_text()  # with the base's conftest: mul(2, 3) is 5
    assert report.base.status == "passed"
    own = report.branch_own
    assert own is not None and own.status == "broken", report.render_text()
    assert "the branch's code rewrites test reports" in own.reason
    assert "the branch fixed this" not in report.render_text()
    data = report.to_json()
    assert data["branch"]["status"] == "failed" and data["branch_own_conftest"]["status"] == "broken"
    assert data["trusted_config"] == ["tests/conftest.py"]


def test_an_unchanged_conftest_gives_no_second_branch_run(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", MUL_BASE, {"calc.py": "def mul(a, b):\n    return a + b\n"})
    report = run_probe(_session(rb.root), MUL_PROBE)
    assert report.branch.status == "failed" and report.branch_own is None
    assert report.to_json()["branch_own_conftest"] is None


def test_probe_cli_of_the_forged_conftest_exits_1_and_shows_both(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", MUL_BASE, MUL_BRANCH)
    probe = tmp_path / "probe_mul.py"
    probe.write_text(MUL_PROBE)
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "PATH": str(Path(sys.executable).parent) + os.pathsep
           + os.environ.get("PATH", "")}
    proc = subprocess.run([sys.executable, "-m", "reviewui", "probe", "agent/work", "--file", str(probe)],
                          cwd=rb.root, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "branch's own conftest" in proc.stdout and "BROKEN" in proc.stdout, proc.stdout
    assert "the branch fixed this" not in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "reviewui", "probe", "agent/work", "--file", str(probe),
                           "--format", "json"], cwd=rb.root, env=env, capture_output=True, text=True, timeout=300)
    assert json.loads(proc.stdout)["branch_own_conftest"]["status"] == "broken"
