"""An old test that fails alone or by the order tests run in is quarantined, never a refusal (issue 39).

The shape that refused whole reviews: an old test module whose tests share
module state. One of them is red at the head and quarantined, so later runs
leave it out; then a second old test, green in the baseline only because the
red one ran before it, fails in the controls (null runs among the graded
ones, with a graded run's selection) and in the graded runs alike. That used
to refuse the command (exit 3). Now the old test is quarantined with why (run
alone: it passes, so it depends on test order), taken out of every grade, and
the branch's own new test still grades its hunk. The branch's own test
caught the same way still refuses: one JSON object (`refused`) in every
`--format json` command.
"""

from __future__ import annotations

import json

import pytest

from tests.clirun import run_cli
from tests.core.bite.helpers import use_venv_python
from tests.gitrepo import make_repo

OLD_TESTS = (
    "import shutil\n\nfrom pkg.calc import clamp\n\nSTATE = {}\n\n\n"
    # red at the head (a tool the tree's environment lacks), after it set the shared state
    "def test_tool_present():\n    STATE['seen'] = True\n    assert shutil.which('no-such-tool-xyz')\n\n\n"
    # green either way; pollutes the state when the red test did not run first (named to sort before
    # the next: a coverage-guided run names its tests in sorted order)
    "def test_apply_defaults():\n    assert clamp(3, 0, 9) == 3\n    if not STATE.get('seen'):\n"
    "        STATE['polluted'] = True\n\n\n"
    # green alone and in the baseline; red when the test before it polluted the state
    "def test_clean_state():\n    assert clamp(5, 0, 9) == 5\n    assert not STATE.get('polluted')\n"
)
# The old tests call clamp (its hunk's lines run in them), so the interleaved controls, which run
# the graded runs' own selections, run them too: a test no graded run runs can refuse nothing.
# (The up-front control this test was written for ran every baseline test in the baseline's order.)
BASE = {"pkg/__init__.py": "", "pkg/calc.py": "def clamp(x, lo, hi):\n    return x\n", "tests/__init__.py": "",
        "tests/test_calc.py": OLD_TESTS}
NEW_TEST = "\n\ndef test_low():\n    assert clamp(-1, 0, 9) == 0\n"
BRANCH = {"pkg/calc.py": "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    return x\n",
          "tests/test_calc.py": OLD_TESTS + NEW_TEST}
# The branch's own new test that depends on the same state: a run through the revert path tells it apart.
OWN_BRANCH = {**BRANCH, "tests/test_calc.py": OLD_TESTS.replace("def test_clean_state", "def test_clean_state_new")
              + NEW_TEST}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    use_venv_python(mp)
    for var in ("XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        mp.setenv(var, str(tmp_path_factory.mktemp(var.lower())))
    old = make_repo(tmp_path_factory.mktemp("old") / "repo", BASE, BRANCH)
    own = make_repo(tmp_path_factory.mktemp("own") / "repo", BASE, OWN_BRANCH)
    out = {
        "bite": run_cli("bite", "agent/work", "--format", "json", "--fresh", cwd=old.root, timeout=600),
        "own bite": run_cli("bite", "agent/work", "--format", "json", "--fresh", cwd=own.root, timeout=600),
        "own tests": run_cli("tests", "agent/work", "--format", "json", cwd=own.root, timeout=600),
        "own check": run_cli("check", "agent/work", "--bite", "--format", "json", cwd=own.root, timeout=600),
    }
    yield out
    mp.undo()


@pytest.mark.slow
def test_an_order_dependent_old_test_is_quarantined_with_why_and_the_new_test_grades(runs) -> None:
    proc = runs["bite"]
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    why = {q["test"]: q["why"] for q in doc["baseline"]["quarantined"]}
    assert why == {"tests/test_calc.py::test_tool_present": "red at the head",
                   "tests/test_calc.py::test_clean_state": "depends on test order"}
    assert doc["baseline"]["own_red"] == []
    assert [(h["verdict"], h["failing_tests"]) for h in doc["hunks"]] == [
        ("bites", ["tests/test_calc.py::test_low"])]
    assert "refused" not in doc


@pytest.mark.slow
@pytest.mark.parametrize("command", ["own bite", "own tests", "own check"])
def test_the_branchs_own_test_caught_by_the_control_is_one_json_refusal(runs, command: str) -> None:
    proc = runs[command]
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)  # one JSON object, nothing else on stdout
    assert doc["refused"]["tests"] == ["tests/test_calc.py::test_clean_state_new"]
    assert "null-revert" in doc["refused"]["reason"] or "revert path" in doc["refused"]["reason"]
    if command == "own check":
        assert "findings" in doc  # the static findings still stand beside the refusal
