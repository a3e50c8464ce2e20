"""Settings from the reviewed repo, and what `exclude` leaves out of the analysis."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.config import Settings
from reviewui.core.errors import ReviewError
from reviewui.core.session import ReviewSession
from tests.gitrepo import RepoBuilder, make_repo


def test_pyproject_then_dotfile_wins(tmp_path: Path) -> None:
    # Read from a commit now, never the working tree (issue 13).
    rb = RepoBuilder(tmp_path)
    sha = rb.commit({
        "pyproject.toml": '[tool.reviewui]\ntest-command = "a"\nnotes-ref = "team"\n',
        ".reviewui.toml": 'test-command = "b"\nexclude = ["vendor/**"]\n',
    })
    s = Settings.from_commit(tmp_path, sha)
    assert (s.test_command, s.notes_ref, s.exclude) == ("b", "refs/notes/team", ("vendor/**",))


@pytest.mark.parametrize(
    "data, message",
    [
        ({"test-globs": "tests/**"}, "test-globs must be a list of strings"),
        ({"severity": {"no-change": "fatal"}}, "severity must map kinds"),
        ({"timeout": -1}, "timeout must be a positive number"),
        ({"exclude": [1]}, "exclude must be a list of strings"),
        ({"test-command": ""}, "test-command must be a non-empty string"),
        ({"warm-runner": "no"}, "warm-runner must be true or false"),
    ],
)
def test_bad_values_are_one_line_errors(data: dict, message: str) -> None:
    with pytest.raises(ReviewError, match=message):
        Settings.from_mapping(data)


def test_exclude_leaves_files_out_of_findings_but_not_the_diff(tmp_path: Path) -> None:
    base = {"app.py": "def f():\n    return 1\n", "tests/test_app.py": "from app import f\n\n\ndef test_f():\n    assert f() == 1\n"}
    branch = {
        "app.py": "def f():\n    return 2\n",
        "tests/test_app.py": "from app import f\n\n\ndef test_f():\n    assert f() == 2\n",
        "samples/demo/tests/test_demo.py": "def test_demo():\n    assert True\n",
        "aaa/vendored.py": "X = 1\n",
    }
    # The config is the base's (a branch's own config is ignored since issue 13).
    base[".reviewui.toml"] = 'exclude = ["samples/**", "tests/**", "aaa/**"]\n'
    make_repo(tmp_path, base, branch, stay="agent/work")
    session = ReviewSession.open(tmp_path, "agent/work")
    all_paths = [f.path for f in session.diff.files]
    analysed = session.analysed_diff()
    assert "samples/demo/tests/test_demo.py" in all_paths
    assert [f.path for f in analysed.files] == [p for p in all_paths if not p.startswith(("samples/", "tests/", "aaa/"))]
    # the edited assertion in tests/ is excluded, so tests-not-additive stays quiet
    assert [f.kind for f in session.findings() if f.kind == "tests-not-additive"] == []
    # a subset still loads the right patch for each of its files after a preload
    analysed.preload()
    app = analysed.file("app.py")
    assert app is not None and [ln.text for ln in app.hunks[0].lines if ln.kind == "added"] == ["    return 2"]
    assert analysed.patch_bytes(app) == session.diff.patch_bytes(app) and b"return 2" in analysed.patch_bytes(app)


def test_excluded_code_is_not_a_caller_and_its_tests_are_not_analysed(tmp_path: Path) -> None:
    branch = {
        "app.py": "def helper():\n    return 1\n",
        "samples/demo/use.py": "from app import helper\n\nhelper()\n",
        "samples/demo/tests/test_use.py": "from app import helper\n\n\ndef test_h():\n    assert helper() == 1\n",
    }
    make_repo(tmp_path, {"README.md": "x\n", ".reviewui.toml": 'exclude = ["samples/**"]\n'}, branch, stay="agent/work")
    session = ReviewSession.open(tmp_path, "agent/work")
    uncalled = [f for f in session.findings() if f.kind == "uncalled-function"]
    assert [(f.symbol, f.severity) for f in uncalled] == [("app.helper", "warning")]
    assert session.fixtures().tests == ()


def test_warm_runner_is_on_unless_turned_off() -> None:
    assert Settings.from_mapping({}).warm_runner is True
    assert Settings.from_mapping({"warm-runner": False}).warm_runner is False


def test_a_pyproject_that_never_names_reviewui_is_not_parsed(tmp_path: Path) -> None:
    # Most projects' pyproject.toml has no reviewui table: it is not parsed at all (issue 16,
    # the first paint), so even a broken one does not stop the review.
    rb = RepoBuilder(tmp_path)
    sha = rb.commit({"pyproject.toml": '[tool.black\nline-length = "unterminated\n'})
    s = Settings.from_commit(tmp_path, sha)
    assert s == Settings.from_mapping({})


def test_a_pyproject_that_names_reviewui_is_parsed_and_checked(tmp_path: Path) -> None:
    rb = RepoBuilder(tmp_path)
    broken = rb.commit({"pyproject.toml": '[tool.reviewui]\ntest-command = "unterminated\n'})
    with pytest.raises(ReviewError, match="pyproject.toml is not valid TOML"):
        Settings.from_commit(tmp_path, broken)


def test_a_reviewui_table_spelled_with_escapes_is_still_read(tmp_path: Path) -> None:
    # TOML lets a quoted key spell the name with \u escapes: such a file must still be parsed.
    rb = RepoBuilder(tmp_path)
    sha = rb.commit({"pyproject.toml": '[tool."review\\u0075i"]\ntest-command = "pytest -x"\n'})
    assert Settings.from_commit(tmp_path, sha).test_command == "pytest -x"
