"""File roles by pytest's conventions, and custom globs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewui.core.roles import DEFAULT_TEST_GLOBS, _match, classify, is_test_path, matches_any


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


# --- the compiled glob set agrees with the one-glob rule it speeds up ---------------------------

_PART = st.text(alphabet="abt_s.*?[]!-/\n\u00e9\\", min_size=0, max_size=8)
_GLOBS = st.lists(st.one_of(st.sampled_from(DEFAULT_TEST_GLOBS + ("spec/**", "src/**/test_*.py", "./**/x.py",
                                                                  "a/*.py", "/**", "**", "[!t]*.py", "*[")),
                            _PART, _PART.map(lambda p: p + "/**"), st.tuples(_PART, _PART).map("/**/".join)),
                  max_size=6).map(tuple)
_PATHS = st.lists(_PART, min_size=1, max_size=4).map("/".join)


@settings(max_examples=400, deadline=None)
@given(path=_PATHS, globs=_GLOBS)
def test_the_glob_set_matches_exactly_what_each_glob_matches(path: str, globs: tuple[str, ...]) -> None:
    expected = any(_match(path, g) for g in globs)
    assert is_test_path(path, globs) is expected
    assert matches_any(path, globs) is expected
    assert matches_any(path, list(globs)) is expected  # a list is matched glob by glob


def test_the_glob_set_on_names_folders_and_hostile_paths() -> None:
    assert is_test_path("a\nb/tests/x.py") and is_test_path("pkg/test_\u00e9.py")
    assert not is_test_path("pkg/test_x.py\n/README") and not is_test_path("tests")
    assert is_test_path("deep/er/test/x.txt") and not is_test_path("contest/x.py")
    globs = ("lib/**/check_*.py",)
    assert is_test_path("lib/a/b/check_x.py", globs) and not is_test_path("lib/check_x.py/y.py", globs)
