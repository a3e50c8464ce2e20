"""A run of reverted code whose collection fails ends before any test, without pytest's Interrupted report.

Pytest formats the traceback of its own `Interrupted` exception when a
collection error stops a run, never showing it: about half of such a run's
time. Runs of reverted code (hunk reverts, the garbage check) end quietly
instead; what they are graded on, the collection error in the JUnit report,
is the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.bite.origin import QUIET_STOP
from reviewui.core.bite.runctx import RunContext
from reviewui.core.config import Settings
from tests.core.bite.helpers import feature_repo, load, use_venv_python


def _suite(root: Path, more: dict[str, str] | None = None) -> Path:
    suite = root / "suite"
    suite.mkdir(parents=True)
    (suite / "test_a.py").write_text("from nowhere import x\n\n\ndef test_a():\n    pass\n")
    (suite / "test_b.py").write_text("def test_b():\n    assert False\n")
    for name, text in (more or {}).items():
        (suite / name).write_text(text)
    return suite


def _run(root: Path, argv: list[str], extra: dict[str, str] | None, more: dict[str, str] | None = None):
    work = root / "work"
    work.mkdir(parents=True)
    return RunContext(argv, {}, [], Settings(), work).run(_suite(root, more), [], 60, extra=extra).run


def test_a_collection_error_ends_the_run_quietly_only_when_asked(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    plain = _run(tmp_path / "plain", ["python", "-m", "pytest"], None)
    assert plain.returncode == 2 and "Interrupted" in plain.output  # pytest's own way, left alone elsewhere

    quiet = _run(tmp_path / "quiet", ["python", "-m", "pytest"], dict(QUIET_STOP))
    assert quiet.returncode == 1 and "Interrupted" not in quiet.output
    assert [(t.id, t.collection) for t in quiet.tests] == [("test_a.py", True)]  # no test ran after it
    assert "No module named 'nowhere'" in quiet.tests[0].message


def test_the_quiet_stop_imports_no_module_after_the_first_collection_error(tmp_path: Path, monkeypatch) -> None:
    # Any collection error makes the run `broken` with the first one as its reason: the
    # modules after it are not even imported (a second broken one would add an error).
    use_venv_python(monkeypatch)
    later = {"test_c.py": "import also_nowhere\n\n\ndef test_c():\n    pass\n"}
    plain = _run(tmp_path / "plain", ["python", "-m", "pytest"], None, later)
    assert sorted(t.id for t in plain.tests if t.collection) == ["test_a.py", "test_c.py"]

    quiet = _run(tmp_path / "quiet", ["python", "-m", "pytest"], dict(QUIET_STOP), later)
    assert [(t.id, t.collection) for t in quiet.tests] == [("test_a.py", True)]
    assert quiet.returncode == 1 and "Interrupted" not in quiet.output and "also_nowhere" not in quiet.output


def test_the_reviewers_continue_on_collection_errors_is_kept(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    run = _run(tmp_path / "r", ["python", "-m", "pytest", "--continue-on-collection-errors"], dict(QUIET_STOP))
    assert {(t.id, t.outcome) for t in run.tests} == {("test_a.py", "error"), ("test_b.py::test_b", "failed")}


@pytest.mark.parametrize("warm", [True, False])
def test_a_revert_that_breaks_an_import_is_broken_by_its_collection_error(tmp_path: Path, monkeypatch,
                                                                         warm: bool) -> None:
    use_venv_python(monkeypatch)
    t, d = load(feature_repo(tmp_path / "r").root)
    rep = run_bite(t, d, Settings(warm_runner=warm), hunks=[("pkg/names.py", 0)], jobs=1)
    (r,) = rep.results
    assert r.verdict == "broken"
    assert r.reason.startswith("tests could not run (collection errors): ")
    assert "helper" in r.reason and "Interrupted" not in r.output
