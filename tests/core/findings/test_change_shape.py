"""no-change and test-only-change."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.findings import change_shape
from reviewui.core.findings.change_shape import is_snapshot_path, no_change
from reviewui.core.target import resolve_target
from reviewui.core.diff import load_diff
from tests.core.findings.helpers import branch, only
from tests.gitrepo import make_repo

BASE = {"app.py": "def run():\n    return 1\n", "tests/test_app.py": "def test_run():\n    assert True\n"}


def test_no_change_fires_even_with_commits(tmp_path: Path) -> None:
    target, diff, _ = branch(tmp_path / "r", BASE, {})
    assert target.commits == 1
    f = only(no_change(target, diff))
    assert (f.kind, f.severity, f.file) == ("no-change", "error", None)
    assert "has 1 commit but base..head is empty" in f.message


def test_no_change_after_change_and_revert(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", BASE, {"app.py": "def run():\n    return 2\n"})
    rb.checkout("agent/work")
    rb.commit({"app.py": BASE["app.py"]}, "revert")
    target = resolve_target(tmp_path / "r", "agent/work", "main")
    f = only(no_change(target, load_diff(str(target.repo_dir), target.base, target.head)))
    assert "2 commits" in f.message


def test_no_change_quiet_when_something_changed(tmp_path: Path) -> None:
    target, diff, _ = branch(tmp_path / "r", BASE, {"README.md": "hi\n"})
    assert no_change(target, diff) == []


def test_test_only_change_fires(tmp_path: Path) -> None:
    target, diff, _ = branch(tmp_path / "r", BASE, {"tests/test_app.py": "def test_run():\n    assert 1\n", "NOTES.md": "x\n"})
    f = only(change_shape.test_only_change(diff))
    assert (f.kind, f.severity, f.file) == ("test-only-change", "error", "tests/test_app.py")
    assert "NOTES.md" in f.evidence


def test_snapshot_only_change_fires(tmp_path: Path) -> None:
    target, diff, _ = branch(tmp_path / "r", {**BASE, "__snapshots__/app.ambr": "a\n"}, {"__snapshots__/app.ambr": "b\n"})
    f = only(change_shape.test_only_change(diff))
    assert "__snapshots__/app.ambr" in f.message


def test_test_only_change_quiet_with_source_or_without_tests(tmp_path: Path) -> None:
    target, diff, _ = branch(tmp_path / "r", BASE, {"tests/test_app.py": "def test_run():\n    assert 1\n", "app.py": "def run():\n    return 2\n"})
    assert change_shape.test_only_change(diff) == []
    target, diff, _ = branch(tmp_path / "r2", BASE, {"README.md": "docs\n"})
    assert change_shape.test_only_change(diff) == []


def test_snapshot_paths() -> None:
    assert is_snapshot_path("tests/__snapshots__/test_x.ambr")
    assert is_snapshot_path("src/__tests__/__snapshots__/x.js.snap")
    assert is_snapshot_path("testdata/golden/out.json")
    assert not is_snapshot_path("src/snapshots/manager.py")
    assert not is_snapshot_path("docs/golden.md")
