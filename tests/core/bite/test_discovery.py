"""The project's own test layout decides which files are tests and which tests run (issue 32).

Each repository here is shaped like a real one reviewui met: a root
`test.py` suite, a `tests.py` / `*_tests.py` / `test/` suite, a unittest
suite that builds its tests through `load_tests`, and a pytest config whose
`python_files` names its own pattern. Every one is graded with no flag,
warm and cold alike, and its test files are never graded as source.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.config import resolve_settings
from reviewui.core.diff import load_diff
from reviewui.core.target import resolve_target
from reviewui.core.test_layout import read_layout
from tests.core.bite.helpers import use_venv_python
from tests.gitrepo import make_repo

CALC = "def clamp(x):\n    return x\n"
CALC_BRANCH = "def clamp(x):\n    if x < 0:\n        return 0\n    return x\n"
PYTEST_STYLE = "from calc import clamp\n\n\ndef test_clamp():\n    assert clamp(-1) == 0\n    assert clamp(3) == 3\n"
UNITTEST_STYLE = (
    "import unittest\n\nfrom calc import clamp\n\n\n"
    "class ClampTest(unittest.TestCase):\n"
    "    def test_clamp(self):\n        self.assertEqual(clamp(-1), 0)\n        self.assertEqual(clamp(3), 3)\n"
)
LOAD_TESTS = (
    "import unittest\n\nfrom calc import clamp\n\n\n"
    "def _check(x, want):\n    assert clamp(x) == want, (x, clamp(x))\n\n\n"
    "def load_tests(loader, tests, pattern):\n"
    "    suite = unittest.TestSuite()\n"
    "    for x, want in ((-1, 0), (3, 3)):\n"
    "        suite.addTest(unittest.FunctionTestCase(lambda x=x, want=want: _check(x, want)))\n"
    "    return suite\n"
)


def _review(root: Path, warm: bool):
    t = resolve_target(root, "agent/work")
    settings = resolve_settings(root, t.base, t.head)
    diff = load_diff(str(root), t.base, t.head, settings.test_globs)
    return t, diff, run_bite(t, diff, replace(settings, warm_runner=warm))


def _graded(report) -> dict[str, str]:
    return {f"{r.file}:{r.index}": r.verdict for r in report.results}


@pytest.mark.parametrize("test_file, body", [
    ("test.py", PYTEST_STYLE),
    ("tests.py", UNITTEST_STYLE),
    ("calc_tests.py", PYTEST_STYLE),
])
def test_a_root_test_module_pytest_does_not_find_by_name_is_run_and_never_graded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, test_file: str, body: str) -> None:
    use_venv_python(monkeypatch)
    # The branch changes the source only: the baseline runs the whole suite, which a bare
    # `python -m pytest` would find empty here.
    rb = make_repo(tmp_path / "r", {"calc.py": CALC, test_file: body}, {"calc.py": CALC_BRANCH})
    reports = []
    for warm in (True, False):
        _, diff, rep = _review(rb.root, warm)
        assert rep.baseline.status == "green", rep.baseline.reason
        assert any(t.startswith(test_file + "::") for t in rep.baseline.tests)
        assert _graded(rep) == {"calc.py:0": "bites"}
        reports.append(_graded(rep))
    assert reports[0] == reports[1]


def test_a_changed_root_test_py_is_a_test_not_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "r", {"calc.py": CALC, "test.py": "def test_nothing():\n    pass\n"},
                   {"calc.py": CALC_BRANCH, "test.py": PYTEST_STYLE})
    _, diff, rep = _review(rb.root, warm=True)
    assert {f.path: f.role for f in diff.files} == {"calc.py": "source", "test.py": "test"}
    assert rep.selected_tests == ("test.py",)
    assert _graded(rep) == {"calc.py:0": "bites"}
    assert rep.baseline.tests == ("test.py::test_clamp",)


def test_a_test_folder_of_unittest_cases_runs_through_pytest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "r", {"calc.py": CALC, "test/__init__.py": "", "test/test_calc.py": UNITTEST_STYLE},
                   {"calc.py": CALC_BRANCH})
    t = resolve_target(rb.root, "agent/work")
    assert resolve_settings(rb.root, t.base, t.head).test_command == "python -m pytest"
    _, _, rep = _review(rb.root, warm=False)
    assert rep.baseline.tests == ("test/test_calc.py::ClampTest::test_clamp",)
    assert _graded(rep) == {"calc.py:0": "bites"}


def test_a_load_tests_suite_runs_under_unittest_and_is_graded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    # pytest never calls load_tests: it would collect nothing here.
    rb = make_repo(tmp_path / "r", {"calc.py": CALC, "test_calc.py": LOAD_TESTS}, {"calc.py": CALC_BRANCH})
    t = resolve_target(rb.root, "agent/work")
    layout = read_layout(rb.root, t.base)
    assert layout.load_tests == ("test_calc.py",) and layout.wants_unittest
    reports = []
    for warm in (True, False):
        _, diff, rep = _review(rb.root, warm)
        assert rep.test_command == "python -m unittest"
        assert rep.baseline.status == "green", rep.baseline.reason
        assert _graded(rep) == {"calc.py:0": "bites"}
        assert {f.path: f.role for f in diff.files} == {"calc.py": "source"}
        reports.append(_graded(rep))
    assert reports[0] == reports[1]


def test_a_unittest_only_file_without_pytest_config_runs_under_unittest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    # `testcalc.py` is unittest's pattern (test*.py) but not pytest's: pytest collects nothing.
    rb = make_repo(tmp_path / "r", {"calc.py": CALC, "testcalc.py": UNITTEST_STYLE},
                   {"calc.py": CALC_BRANCH, "testcalc.py": UNITTEST_STYLE + "\n# more\n"})
    _, diff, rep = _review(rb.root, warm=False)
    assert {f.path: f.role for f in diff.files} == {"calc.py": "source", "testcalc.py": "test"}
    assert rep.test_command == "python -m unittest"
    assert _graded(rep) == {"calc.py:0": "bites"}


def test_the_base_commits_python_files_decide_and_the_branchs_do_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    ini = "[pytest]\npython_files = check_*.py\ntestpaths = checks\n"
    rb = make_repo(tmp_path / "r",
                   {"calc.py": CALC, "pytest.ini": ini, "checks/check_calc.py": "def test_old():\n    pass\n"},
                   # The branch's own pytest.ini is not trusted to reclassify anything.
                   {"calc.py": CALC_BRANCH, "checks/check_calc.py": PYTEST_STYLE,
                    "pytest.ini": ini.replace("check_*.py", "check_*.py calc.py")})
    t = resolve_target(rb.root, "agent/work")
    layout = read_layout(rb.root, t.base)
    assert layout.python_files == ("check_*.py",) and layout.testpaths == ("checks",)
    _, diff, rep = _review(rb.root, warm=True)
    roles = {f.path: f.role for f in diff.files}
    assert roles["checks/check_calc.py"] == "test" and roles["calc.py"] == "source"
    assert rep.selected_tests == ("checks/check_calc.py",)
    assert _graded(rep) == {"calc.py:0": "bites", "pytest.ini:0": "not-code"}


def test_python_files_outside_testpaths_do_not_make_source_a_test(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", {"pyproject.toml": "[tool.pytest.ini_options]\npython_files = ['*.py']\n"
                                    "testpaths = ['tests']\n", "pkg/core.py": CALC}, {"pkg/core.py": CALC_BRANCH})
    t = resolve_target(rb.root, "agent/work")
    settings = resolve_settings(rb.root, t.base, t.head)
    diff = load_diff(str(rb.root), t.base, t.head, settings.test_globs)
    assert {f.path: f.role for f in diff.files} == {"pkg/core.py": "source"}
    assert "tests/**/*.py" in settings.test_globs


def test_unittest_cases_pytest_is_told_not_to_run_run_under_unittest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    ini = "[pytest]\naddopts = -p no:unittest\n"
    rb = make_repo(tmp_path / "r", {"calc.py": CALC, "pytest.ini": ini, "test_calc.py": UNITTEST_STYLE},
                   {"calc.py": CALC_BRANCH})
    t = resolve_target(rb.root, "agent/work")
    layout = read_layout(rb.root, t.base)
    assert layout.plugins == ("no:unittest",) and layout.blocked_cases == ("test_calc.py",)
    _, _, rep = _review(rb.root, warm=False)
    assert rep.test_command == "python -m unittest"
    assert _graded(rep) == {"calc.py:0": "bites"}


def test_the_cli_grades_a_root_test_py_project_with_no_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from tests.clirun import run_cli

    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "r", {"calc.py": CALC, "test.py": PYTEST_STYLE}, {"calc.py": CALC_BRANCH})
    res = run_cli("bite", "agent/work", "--format", "json", cwd=rb.root, timeout=300)
    doc = json.loads(res.stdout)
    assert res.returncode == 0, res.stderr
    assert doc["baseline"]["status"] == "green"
    assert [(h["file"], h["verdict"]) for h in doc["hunks"]] == [("calc.py", "bites")]


def test_a_whole_suite_run_names_nothing_outside_the_configured_testpaths() -> None:
    """Sample projects and vendored trees outside `testpaths` are not the suite (reviewui's own
    sample_repos made its self-review's baseline collect a sample's missing dependency)."""
    from reviewui.core.test_layout import TestLayout

    layout = TestLayout(python_files=("test_*.py",), testpaths=("tests",))
    tree = ["tests/test_ok.py", "tests/tests.py", "sample_repos/story/base/tests/test_backoff.py", "pkg/core.py"]
    assert layout.suite_paths(tree) == ("tests/test_ok.py", "tests/tests.py")  # tests.py: a name pytest misses
    assert TestLayout(python_files=("test_*.py",), testpaths=("tests",)).suite_paths(tree[:1] + tree[2:]) == ()
