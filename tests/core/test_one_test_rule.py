"""One rule decides what a test module is, and every part of reviewui asks it (issue 39).

`TestLayout.is_module` (core/test_layout.py) answers for bite's selection, the
truth table's and the fixtures pane's test analysis, the whole-suite run's
named modules and the findings; a test here swaps the rule and watches each
of them follow. The layouts are real projects' (only their ids kept):

- pylint: `setup.cfg` says `testpaths = tests` and `python_files = *test_*.py`,
  and its suites are `tests/checkers/unittest_*.py` modules of test classes
  (`tests/checkers/unittest_strings.py::TestStringChecker`). The truth table
  once found none of them (it knew only `test_*.py` / `*_test.py`).
- a suite collected only by its explicit command (`python -m pytest
  tests/tests_functional.py`): pytest collects a file it is handed by path,
  whatever its name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.bite.selection import static_selection
from reviewui.core.config import resolve_settings
from reviewui.core.diff import load_diff
from reviewui.core.findings import suite_config
from reviewui.core.fixtures import analyze
from reviewui.core.session import ReviewSession, RunOptions
from reviewui.core.target import resolve_target
from reviewui.core.test_layout import TestLayout, command_files, read_layout
from tests.core.bite.helpers import use_venv_python
from tests.gitrepo import make_repo

# pylint's layout: ids only (file names, class and test names); the code is ours.
PYLINT_CFG = "[tool:pytest]\ntestpaths = tests\npython_files = *test_*.py\naddopts = --strict-markers\n"
STRINGS = "def quote_kind(text):\n    return 'single'\n"
STRINGS_BRANCH = "def quote_kind(text):\n    if text.startswith('\"'):\n        return 'double'\n    return 'single'\n"
UNITTEST_STRINGS = (
    "from pylint.checkers.strings import quote_kind\n\n\n"
    "class TestStringChecker:\n"
    "    def test_single(self):\n        assert quote_kind(\"'a'\") == 'single'\n"
)
UNITTEST_STRINGS_BRANCH = UNITTEST_STRINGS + "\n    def test_double(self):\n        assert quote_kind('\"a\"') == 'double'\n"


def _pylint_shaped(root: Path):
    return make_repo(root, {"setup.cfg": PYLINT_CFG, "pylint/__init__.py": "", "pylint/checkers/__init__.py": "",
                            "pylint/checkers/strings.py": STRINGS,
                            "tests/checkers/unittest_strings.py": UNITTEST_STRINGS},
                     {"pylint/checkers/strings.py": STRINGS_BRANCH,
                      "tests/checkers/unittest_strings.py": UNITTEST_STRINGS_BRANCH})


def _parts(root: Path, command: str | None = None):
    """What each part of reviewui takes for a test module in the repo at `root`."""
    t = resolve_target(root, "agent/work")
    settings = resolve_settings(root, t.base, t.head)
    if command is not None:
        from reviewui.core.config import with_command

        settings = with_command(settings, command)
    diff = load_diff(str(root), t.base, t.head, settings.test_globs)
    layout = settings.test_layout
    tree = [f.path for f in diff.files]
    fixtures = analyze(root, t.base, t.head, tree, settings.test_globs, layout)
    return {
        "bite": static_selection(diff, tree, lambda p: None, layout).changed,
        "tests and fixtures": tuple(sorted({x.file for x in fixtures.tests})),
        "whole-suite run": layout.suite_paths([*tree, "tests/test_other.py"]),
        "findings": tuple(suite_config._base_tests(t, settings)),
    }


def test_every_part_asks_the_one_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `tests/verify_calc.py` is no test module by any name pytest knows: every part leaves it out...
    rb = make_repo(tmp_path / "r", {"calc.py": "def f():\n    return 1\n",
                                    "tests/verify_calc.py": "def test_old():\n    assert True\n"},
                   {"calc.py": "def f():\n    return 2\n",
                    "tests/verify_calc.py": "def test_old():\n    assert True\n\n\ndef test_new():\n    assert 1\n"})
    before = _parts(rb.root)
    assert all("tests/verify_calc.py" not in v for v in before.values()), before
    # ...and when the one rule says it is one, each of them takes it, none by a rule of its own.
    real = TestLayout.is_module
    monkeypatch.setattr(TestLayout, "is_module",
                        lambda self, path: path.endswith("/verify_calc.py") or real(self, path))
    after = _parts(rb.root)
    assert {k: "tests/verify_calc.py" in v for k, v in after.items()} == dict.fromkeys(after, True), after
    suite_config._python_tests_at.cache_clear()


def test_pylint_unittest_modules_named_by_python_files_are_tests_everywhere(tmp_path: Path) -> None:
    rb = _pylint_shaped(tmp_path / "r")
    t = resolve_target(rb.root, "agent/work")
    layout = read_layout(rb.root, t.base)
    assert layout.testpaths == ("tests",) and layout.is_module("tests/checkers/unittest_strings.py")
    assert not layout.is_module("pylint/checkers/unittest_like.py")  # outside testpaths: not the suite
    parts = _parts(rb.root)
    assert parts["bite"] == ("tests/checkers/unittest_strings.py",)
    assert parts["tests and fixtures"] == ("tests/checkers/unittest_strings.py",)


def test_the_files_an_explicit_command_names_are_test_modules() -> None:
    assert command_files("python -m pytest tests/tests_functional.py -s") == ("tests/tests_functional.py",)
    assert command_files("PYTHONPATH=src pytest ./tests/tests_a.py::TestA::test_x -p no:cacheprovider "
                         "--ignore tests/skip_me.py") == ("tests/tests_a.py",)
    assert command_files("python tests/run_all.py tests/tests_b.py") == ("tests/tests_b.py",)  # a runner script is not one
    assert command_files("python -m unittest discover -s tests -p 'tests_*.py'") == ()
    assert command_files("pytest /abs/tests_x.py ../up/tests_y.py") == ()  # never outside the tree
    assert command_files("pytest 'unbalanced") == ()
    layout = TestLayout().with_command("python -m pytest tests/tests_functional.py")
    assert layout.is_module("tests/tests_functional.py") and not layout.is_module("tests/tests_other.py")


def test_python_functions_and_classes_decide_which_tests_a_module_holds(tmp_path: Path) -> None:
    cfg = "[pytest]\npython_files = check_*.py\npython_classes = Describe\npython_functions = it_* test\n"
    body = ("class DescribeClamp:\n    def it_clamps(self):\n        assert True\n\n"
            "    def helper(self):\n        pass\n\n\nclass TestIgnored:\n    def it_is_not_collected(self):\n"
            "        pass\n\n\ndef it_works():\n    assert True\n\n\ndef test_plain():\n    assert True\n")
    rb = make_repo(tmp_path / "r", {"pytest.ini": cfg, "calc.py": "X = 1\n"},
                   {"calc.py": "X = 2\n", "check_calc.py": body})
    t = resolve_target(rb.root, "agent/work")
    settings = resolve_settings(rb.root, t.base, t.head)
    report = analyze(rb.root, t.base, t.head, ["calc.py", "check_calc.py"], settings.test_globs,
                     settings.test_layout)
    assert sorted(x.id for x in report.tests) == [
        "check_calc.py::DescribeClamp::it_clamps", "check_calc.py::it_works", "check_calc.py::test_plain"]


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory):
    """The truth table of the pylint-shaped branch, and of a suite only its explicit command collects."""
    mp = pytest.MonkeyPatch()
    use_venv_python(mp)
    mp.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    pylint = _pylint_shaped(tmp_path_factory.mktemp("pylint") / "repo")
    explicit = make_repo(tmp_path_factory.mktemp("explicit") / "repo", {
        "calc.py": "def clamp(x):\n    return x\n",
        "tests/tests_functional.py": "from calc import clamp\n\n\ndef test_mid():\n    assert clamp(3) == 3\n",
    }, {
        "calc.py": "def clamp(x):\n    if x < 0:\n        return 0\n    return x\n",
        "tests/tests_functional.py": ("from calc import clamp\n\n\ndef test_mid():\n    assert clamp(3) == 3\n\n\n"
                                      "def test_low():\n    assert clamp(-1) == 0\n"),
    })
    out = {}
    for name, rb, cmd in (("pylint", pylint, None),
                          ("explicit", explicit, "python -m pytest tests/tests_functional.py")):
        session = ReviewSession.open(rb.root, "agent/work", run=RunOptions(test_cmd=cmd))
        report = session.bite()
        out[name] = (report, session.tests_table(report))
    yield out
    mp.undo()


@pytest.mark.slow
def test_the_truth_table_finds_the_tests_the_projects_config_finds(tables) -> None:
    report, table = tables["pylint"]
    assert report.selected_tests == ("tests/checkers/unittest_strings.py",)
    assert {(r.id, r.base) for r in table.tests} == {
        ("tests/checkers/unittest_strings.py::TestStringChecker::test_double", "fails")}
    report, table = tables["explicit"]
    assert table.status == "complete", table.reason
    assert {(r.id, r.change, r.base) for r in table.tests} == {("tests/tests_functional.py::test_low", "added", "fails")}
    assert [r.verdict for r in report.results] == ["bites"]
