"""File roles by pytest's conventions, and custom globs."""

from __future__ import annotations

import pytest

from reviewui.core.roles import classify, matches_any


@pytest.mark.parametrize(
    "path, role",
    [
        ("tests/data/x.json", "test"),
        ("a/test/b.py", "test"),
        ("test_a.py", "test"),
        ("pkg/b_test.py", "test"),
        ("deep/conftest.py", "test"),
        ("src/a.py", "source"),
        ("x/tests_helper.py", "source"),
        ("mytests/x.py", "source"),
        ("lib/A.PY", "source"),
        ("README.md", "other"),
        (".py", "other"),
        ("tests", "other"),
        ("docs/test_plan.md", "other"),
        ("test.py", "test"),
        ("tests.py", "test"),
        ("pkg/io_tests.py", "test"),
        ("pkg/testing.py", "source"),
    ],
)
def test_default_roles(path: str, role: str) -> None:
    assert classify(path) == role


def test_custom_globs() -> None:
    globs = ("spec/**", "*_spec.rb", "it/unit/**")
    assert classify("spec/models/user.rb", globs) == "test"
    assert classify("app/user_spec.rb", globs) == "test"
    assert classify("it/unit/x.go", globs) == "test"
    assert classify("x/it/unit/y.go", globs) == "test"
    assert classify("tests/test_a.py", globs) == "source"
    assert matches_any("sample_repos/a/b.py", ("sample_repos/**",))
    assert not matches_any("my_sample_repos/a.py", ("sample_repos/**",))


def test_a_folder_scoped_name_glob() -> None:
    globs = ("checks/**/check_*.py",)
    assert classify("checks/check_a.py", globs) == "test"
    assert classify("checks/deep/check_a.py", globs) == "test"
    assert classify("src/check_a.py", globs) == "source"
    assert classify("xchecks/check_a.py", globs) == "source"
