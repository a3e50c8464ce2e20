"""Resolving the review target, and the one-line errors a user can cause."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.target import resolve_target
from tests.gitrepo import RepoBuilder, make_repo


def test_defaults_to_checked_out_branch_and_main(tmp_path: Path) -> None:
    rb = make_repo(tmp_path, {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"}, stay="agent/work")
    base = rb.git("rev-parse", "main")
    t = resolve_target(tmp_path)
    assert t.branch == "agent/work"
    assert t.base == base and t.base_ref == "main"
    assert t.head == rb.git("rev-parse", "agent/work")
    assert t.commits == 1 and not t.is_empty


def test_base_is_merge_base_not_tip(tmp_path: Path) -> None:
    rb = make_repo(tmp_path, {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"})
    fork = rb.git("rev-parse", "main")
    rb.commit({"b.py": "B = 1\n"}, "main moves on")
    t = resolve_target(tmp_path, "agent/work")
    assert t.base == fork


def test_master_and_origin_head(tmp_path: Path) -> None:
    rb = RepoBuilder(tmp_path)
    rb.git("checkout", "-q", "-b", "master")
    rb.commit({"a.py": "1\n"})
    rb.git("branch", "-D", "main") if "main" in rb.git("branch") else None
    rb.branch("feature", "master")
    rb.commit({"a.py": "2\n"})
    assert resolve_target(tmp_path).base_ref == "master"
    rb.git("update-ref", "refs/remotes/origin/trunk", "master")
    rb.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    assert resolve_target(tmp_path).base_ref == "origin/trunk"


def test_explicit_base(tmp_path: Path) -> None:
    rb = RepoBuilder(tmp_path)
    rb.commit({"a.py": "A = 1\n"})
    rb.commit({"a.py": "A = 2\n"})
    rb.branch("agent/work")
    rb.commit({"a.py": "A = 3\n"})
    t = resolve_target(tmp_path, "agent/work", base="main~1")
    assert t.base_ref == "main~1" and t.commits == 2


def test_branch_with_no_commits_beyond_base_is_empty(tmp_path: Path) -> None:
    rb = make_repo(tmp_path, {"a.py": "A = 1\n"}, {})
    t = resolve_target(tmp_path, "main")
    assert t.is_empty and t.commits == 0
    assert rb  # repo kept alive


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"branch": "nope"}, "unknown branch: nope"),
        ({"branch": "agent/work", "base": "nope"}, "unknown base: nope"),
        ({"branch": "--exec=evil"}, "not a branch name"),
    ],
)
def test_user_errors(tmp_path: Path, kwargs: dict, message: str) -> None:
    make_repo(tmp_path, {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"})
    with pytest.raises(ReviewError, match=message):
        resolve_target(tmp_path, **kwargs)


def test_not_a_repo(tmp_path: Path) -> None:
    with pytest.raises(ReviewError, match="not a git repository"):
        resolve_target(tmp_path)


def test_missing_dir(tmp_path: Path) -> None:
    with pytest.raises(ReviewError, match="no such directory"):
        resolve_target(tmp_path / "missing")


def test_bare_repo(tmp_path: Path) -> None:
    make_repo(tmp_path / "src", {"a.py": "1\n"}, {"a.py": "2\n"})
    RepoBuilder.__new__(RepoBuilder)
    import subprocess

    subprocess.run(["git", "clone", "-q", "--bare", str(tmp_path / "src"), str(tmp_path / "b.git")], check=True)
    with pytest.raises(ReviewError, match="bare repository"):
        resolve_target(tmp_path / "b.git")


def test_empty_repo(tmp_path: Path) -> None:
    RepoBuilder(tmp_path)
    with pytest.raises(ReviewError, match="no commits"):
        resolve_target(tmp_path)


def test_unrelated_histories(tmp_path: Path) -> None:
    rb = make_repo(tmp_path, {"a.py": "1\n"}, {"a.py": "2\n"})
    rb.git("checkout", "-q", "--orphan", "lonely")
    rb.commit({"z.py": "z\n"}, "orphan")
    with pytest.raises(ReviewError, match="no common ancestor"):
        resolve_target(tmp_path, "lonely")
