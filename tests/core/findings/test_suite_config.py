"""tests-not-additive on test configuration: narrowed collection and relaxed strictness."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.findings import suite_config
from reviewui.core.findings.tests_additive import tests_not_additive
from tests.core.findings.helpers import branch, only

TESTS = {
    "pkg/__init__.py": "",
    "tests/unit/test_a.py": "def test_a():\n    assert True\n",
    "tests/slow/test_b.py": "def test_b():\n    assert True\n",
}


def found(tmp_path: Path, base: dict, change: dict):
    target, diff, settings = branch(tmp_path / "r", {**TESTS, **base}, change)
    return tests_not_additive(target, diff, settings)


@pytest.mark.parametrize(
    "old,new,words",
    [
        ('addopts = "-q"', 'addopts = "-q -k \'not ledger\'"', "addopts gains -k 'not ledger'"),
        ('addopts = "-q"', 'addopts = "-q --deselect tests/unit/test_a.py::test_a"', "gains --deselect"),
        ('addopts = ["-q"]', 'addopts = ["-q", "--ignore=tests/slow"]', "gains --ignore tests/slow"),
        ('addopts = "-q"', 'addopts = "-q tests/unit"', "gains tests/unit"),
        ('addopts = "--strict-markers -q"', 'addopts = "-q"', "drops --strict-markers"),
        ("xfail_strict = true", "xfail_strict = false", "xfail_strict turned off"),
        ('filterwarnings = ["error"]', "filterwarnings = []", "filterwarnings drops error"),
        ('testpaths = ["tests"]', 'testpaths = ["tests/unit"]', "1 existing test file(s) no longer collected, e.g. tests/slow/test_b.py"),
        ('python_files = ["test_*.py"]', 'python_files = ["check_*.py"]', "python_files drops test_*.py"),
        ('norecursedirs = [".git"]', 'norecursedirs = [".git", "slow"]', "norecursedirs now skips tests/slow/test_b.py"),
    ],
)
def test_pyproject_loosening_fires(tmp_path: Path, old: str, new: str, words: str) -> None:
    head = "[project]\nname = 'x'\n\n[tool.pytest.ini_options]\n"
    f = only(found(tmp_path, {"pyproject.toml": head + old + "\n"}, {"pyproject.toml": head + new + "\n"}))
    assert words in f.message, f.message
    assert f.file == "pyproject.toml" and f.line == 5 and f.severity == "error"


def test_both_strict_options_dropped_are_two_findings(tmp_path: Path) -> None:
    head = "[tool.pytest.ini_options]\n"
    out = found(tmp_path, {"pyproject.toml": head + 'addopts = "--strict-markers -W error"\n'}, {"pyproject.toml": head + 'addopts = "-W default"\n'})
    assert sorted(f.message for f in out) == [
        "test strictness relaxed: addopts drops --strict-markers",
        "test strictness relaxed: addopts drops -W error",
    ]


@pytest.mark.parametrize(
    "old,new",
    [
        ('addopts = "-q"', 'addopts = "-q -v --tb=short"'),  # more output is not fewer tests
        ("", 'testpaths = ["tests"]'),  # still covers every existing test file
        ('testpaths = ["tests/unit"]', 'testpaths = ["tests"]'),  # widened
        ('addopts = "-k fast"', 'addopts = ""'),  # dropping a -k selects more
        ('python_files = ["test_*.py"]', 'python_files = ["test_*.py", "check_*.py"]'),
        ("", 'norecursedirs = ["build"]'),  # no existing test lives under build/
        ('testpaths = ["tests/unit"]', 'testpaths = ["tests/unit", "docs"]'),  # tests/slow was never collected
    ],
)
def test_pyproject_near_misses_are_quiet(tmp_path: Path, old: str, new: str) -> None:
    head = "[tool.pytest.ini_options]\n"
    assert found(tmp_path, {"pyproject.toml": head + old + "\n"}, {"pyproject.toml": head + new + "\n"}) == []


@pytest.mark.parametrize(
    "name,section",
    [("pytest.ini", "[pytest]"), ("tox.ini", "[tox]\nenvlist = py311\n\n[pytest]"), ("setup.cfg", "[metadata]\nname = x\n\n[tool:pytest]")],
)
def test_ini_files_are_read(tmp_path: Path, name: str, section: str) -> None:
    before = f"{section}\naddopts = -q\n"
    after = f"{section}\naddopts = -q\n    --deselect tests/unit/test_a.py::test_a\n"
    f = only(found(tmp_path, {name: before}, {name: after}))
    assert f.file == name and "--deselect tests/unit/test_a.py::test_a" in f.message


def test_new_pytest_ini_with_k_fires(tmp_path: Path) -> None:
    f = only(found(tmp_path, {}, {"pytest.ini": "[pytest]\naddopts = -k 'not slow'\n"}))
    assert "-k 'not slow'" in f.message


def test_unreadable_config_is_quiet(tmp_path: Path) -> None:
    assert found(tmp_path, {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"}, {"pyproject.toml": "[tool.pytest\nbroken = "}) == []


def test_config_in_a_subfolder_is_relative_to_it(tmp_path: Path) -> None:
    base = {"sub/pytest.ini": "[pytest]\ntestpaths = tests\n", "sub/tests/test_s.py": "def test_s():\n    pass\n", "sub/tests/more/test_m.py": "def test_m():\n    pass\n"}
    f = only(found(tmp_path, base, {"sub/pytest.ini": "[pytest]\ntestpaths = tests/more\n"}))
    assert "e.g. sub/tests/test_s.py" in f.message


def test_conftest_collect_ignore_fires(tmp_path: Path) -> None:
    base = {"tests/conftest.py": "collect_ignore = ['setup.py']\n"}
    out = found(tmp_path, base, {"tests/conftest.py": "collect_ignore = ['setup.py', 'slow/test_b.py']\ncollect_ignore_glob = []\ncollect_ignore_glob.append('unit/*')\n"})
    assert sorted(f.message for f in out) == [
        "conftest now ignores slow/test_b.py at collection",
        "conftest now ignores unit/* at collection",
    ]
    assert {f.line for f in out} == {1, 3}


def test_conftest_hooks_that_hide_tests_fire(tmp_path: Path) -> None:
    hook = (
        "def pytest_collection_modifyitems(config, items):\n"
        "    keep = [i for i in items if 'ledger' not in i.name]\n"
        "    config.hook.pytest_deselected(items=[i for i in items if i not in keep])\n"
        "    items[:] = keep\n"
    )
    f = only(found(tmp_path, {"tests/conftest.py": "import pytest\n"}, {"tests/conftest.py": "import pytest\n\n\n" + hook}))
    assert f.symbol == "pytest_collection_modifyitems" and "added and can hide tests" in f.message and f.line == 4


def test_conftest_fixture_and_harmless_hook_are_quiet(tmp_path: Path) -> None:
    new = (
        "import pytest\n\n\n@pytest.fixture\ndef ledger():\n    return []\n\n\n"
        "def pytest_configure(config):\n    config.addinivalue_line('markers', 'slow: slow')\n"
    )
    assert found(tmp_path, {"tests/conftest.py": "import pytest\n"}, {"tests/conftest.py": new}) == []


def test_addopts_tokenizer() -> None:
    assert suite_config._split_opts("-q -kfoo --deselect=a::b -m 'not slow' tests/x -Werror") == [
        "-q", "-k foo", "--deselect a::b", "-m not slow", "<path> tests/x", "-W error",
    ]
    assert suite_config._split_opts("-k 'unterminated") == ["-k 'unterminated"]
