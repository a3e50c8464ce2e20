"""What a claims rerun takes from an agent's command (its tests and options, never its program), and
what a rerun must show before a claim is confirmed (issues 37 and 39)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.claims.commands import RunCommand, find_test_command
from reviewui.core.claims.extract import Claim
from reviewui.core.claims.rerun_plan import RerunPlan, missing_tests, plan
from reviewui.core.claims.summary import TestSummary
from reviewui.core.claims.verify import Rerun, judge, trusted_python


def _plan(line: str) -> RerunPlan | str:
    found = find_test_command(line)
    assert found is not None, line
    return plan(found)


@pytest.mark.parametrize(("line", "why"), [
    ("tools/python -m pytest -q", "is a path"),
    ("/tmp/reviewui-scratch-u0/ab/slots/0/tree/venv/bin/python -m pytest", "is a path"),
    ("./pytest -q", "is a path"),
    ("PATH=/tmp/slot/bin:/usr/bin pytest -q", "sets PATH"),
    ("env PATH=/tmp/slot/bin pytest", "sets PATH"),
    ("PYTHONPATH=. pytest", "sets PYTHONPATH"),
    ("PYTHONSTARTUP=evil.py python -m pytest", "sets PYTHONSTARTUP"),
    ("LD_PRELOAD=./x.so pytest", "sets LD_PRELOAD"),
    ("PYTEST_ADDOPTS=-pevil pytest", "sets PYTEST_ADDOPTS"),
    ("HOME=/tmp pytest", "sets HOME"),
    ("REVIEWUI_IN_SANDBOX=0 pytest", "sets REVIEWUI_IN_SANDBOX"),
    ("go test ./...", "not a test runner"),
    ("npm test", "not a test runner"),
    ("python3 -m tox", "not a test runner"),
    ("tox -e py311", "not a test runner"),
])
def test_an_agent_program_or_environment_is_never_taken(line: str, why: str) -> None:
    got = _plan(line)
    assert isinstance(got, str) and why in got, got


def test_only_the_tests_and_options_are_taken() -> None:
    got = _plan("cd /w && DJANGO_SETTINGS_MODULE=site.settings timeout 60 uv run --frozen pytest -q -k 'add or sub' "
                "tests/test_calc.py::test_add -p no:randomly tests/unit")
    assert isinstance(got, RerunPlan)
    assert got.runner == "pytest"
    assert got.args.words == ("-q", "-k", "add or sub", "tests/test_calc.py::test_add", "-p", "no:randomly",
                              "tests/unit")
    assert got.env == (("DJANGO_SETTINGS_MODULE", "site.settings"),)
    assert got.named_tests == ("tests/test_calc.py", "tests/unit")  # option values name no test
    unit = _plan("python3 -m unittest -v tests.test_calc")
    assert isinstance(unit, RerunPlan) and (unit.runner, unit.args.words, unit.named_tests) == \
        ("unittest", ("-v", "tests.test_calc"), ("tests.test_calc",))


def test_named_tests_must_be_in_the_tree(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text("")
    assert missing_tests(tmp_path, ("tests/test_calc.py", "tests"), "pytest") == []
    assert missing_tests(tmp_path, ("tests/test_nope.py", "../outside.py", "/etc/passwd"), "pytest") == \
        ["tests/test_nope.py", "../outside.py", "/etc/passwd"]
    assert missing_tests(tmp_path, ("tests.test_calc.TestA.test_b", "tests.test_gone"), "unittest") == []
    assert missing_tests(tmp_path, ("nope.test_x",), "unittest") == ["nope.test_x"]


def test_the_trusted_python_is_the_test_commands_never_a_tree_file() -> None:
    assert trusted_python("PYTHONPATH=src python -m pytest") == ("python", {"PYTHONPATH": "src"})
    assert trusted_python("tools/python -m pytest")[0] is None
    assert trusted_python("make test")[0] is None


def _run(reported: TestSummary) -> Claim:
    return Claim("run", 5, "y", RunCommand("pytest", ("python", "-m", "pytest", "-q")), reported)


KEY = "python -m pytest -q"


def test_more_passed_than_the_head_ran_is_contradicted() -> None:
    checks = judge([_run(TestSummary("pytest", 41, 0, 0)), Claim("final", 7, "41 passed", None,
                                                                 TestSummary("claim", 41, 0))],
                   {KEY: Rerun(KEY, TestSummary("pytest", 12, 0, 0))})
    assert [c.outcome for c in checks] == ["contradicted", "contradicted"]
    assert "12 ran" in checks[0].why


def test_a_rerun_that_ran_no_test_confirms_nothing() -> None:
    for head in (TestSummary("pytest", 0, 0, 0, 3), TestSummary("exit", 0, 0)):
        checks = judge([_run(TestSummary("pytest", 728, 0, 0)), Claim("final", 7, "All tests pass")],
                       {KEY: Rerun(KEY, head)})
        assert [c.outcome for c in checks] == ["unverifiable", "unverifiable"], head
