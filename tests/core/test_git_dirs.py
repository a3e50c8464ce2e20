"""Where a repository's root and shared git directory are, asked of git as few times as it can be."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core import git
from reviewui.core.errors import ReviewError
from tests.gitrepo import make_repo


def _count_git(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    calls: list[tuple[str, ...]] = []
    real = git.run_git

    def counted(cwd: str | Path, *args: str, **kw: object) -> bytes:
        calls.append(args)
        return real(cwd, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(git, "run_git", counted)
    return calls


def test_root_and_common_dir_of_a_linked_worktree_s_subfolder_come_from_one_git_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rb = make_repo(tmp_path / "main", {"pkg/a.py": "A = 1\n"}, {"pkg/a.py": "A = 2\n"})
    linked = tmp_path / "linked"
    rb.git("worktree", "add", "-q", str(linked), "agent/work")
    git._COMMON_DIRS.clear()
    calls = _count_git(monkeypatch)
    root, common = git.repo_dirs(linked / "pkg")
    assert root.resolve() == linked.resolve()
    assert common.resolve() == (tmp_path / "main" / ".git").resolve()  # the main checkout's, not the worktree's
    assert len(calls) == 1
    # asked again (the review's state, its local settings): answered without git
    assert git.git_common_dir(linked).resolve() == common.resolve()
    assert len(calls) == 1


def test_a_remembered_common_dir_that_went_away_is_asked_again(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    first = tmp_path / "first"
    make_repo(first, {"a.py": "1\n"}, {"a.py": "2\n"})
    git._COMMON_DIRS.clear()
    assert git.git_common_dir(first).resolve() == (first / ".git").resolve()
    # the repository is replaced by a linked worktree of another one at the same path
    import shutil

    shutil.rmtree(first)
    other = make_repo(tmp_path / "other", {"a.py": "1\n"}, {"a.py": "2\n"})
    other.git("worktree", "add", "-q", str(first), "agent/work")
    calls = _count_git(monkeypatch)
    assert git.git_common_dir(first).resolve() == (tmp_path / "other" / ".git").resolve()
    assert len(calls) == 1


@pytest.mark.parametrize("where", ["bare", "inside-git", "no-repo"])
def test_outside_a_work_tree_the_answers_are_as_before(tmp_path: Path, where: str) -> None:
    rb = make_repo(tmp_path / "repo", {"a.py": "1\n"}, {"a.py": "2\n"})
    if where == "bare":
        rb.git("clone", "-q", "--bare", str(tmp_path / "repo"), str(tmp_path / "bare.git"))
        with pytest.raises(ReviewError, match="bare repository"):
            git.repo_dirs(tmp_path / "bare.git")
    elif where == "inside-git":  # git cannot say the top level from inside .git: found as before
        root, common = git.repo_dirs(tmp_path / "repo" / ".git" / "refs")
        assert root.resolve() == (tmp_path / "repo").resolve()
        assert common.resolve() == (tmp_path / "repo" / ".git").resolve()
    else:
        (tmp_path / "plain").mkdir()
        with pytest.raises(ReviewError, match="not a git repository"):
            git.repo_dirs(tmp_path / "plain")


def test_show_files_reads_several_files_at_two_commits_in_one_git_process(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    rb = make_repo(tmp_path, {"a.txt": "base\n", "b.bin": b"\x00\xff"}, {"a.txt": "head\n", "b.bin": None})
    base, head = rb.git("rev-parse", "main"), rb.git("rev-parse", "agent/work")
    spawned: list[object] = []
    real = git.subprocess.Popen

    def popen(*a: object, **kw: object) -> object:
        spawned.append(a[0])
        return real(*a, **kw)  # type: ignore[call-overload]

    monkeypatch.setattr(git.subprocess, "Popen", popen)
    got = git.show_files(tmp_path, [(base, "a.txt"), (head, "a.txt"), (base, "b.bin"), (head, "b.bin"),
                                    (head, "missing"), (head, "a\nb.txt"), (base, "a.txt")], cap=3)
    assert got == [b"base", b"head", b"\x00\xff", None, None, None, b"base"]  # cut at cap + 1 bytes
    assert len(spawned) == 1
    assert git.show_files(tmp_path, []) == [] and git.show_files(tmp_path, [(head, "x\ry")]) == [None]


def test_a_git_without_path_format_is_asked_one_question_at_a_time(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # Older than 2.31, git knows no --path-format: the one call fails, and the top level comes
    # from its own question (the fallback's work-tree path, not GitPython's).
    rb = make_repo(tmp_path / "repo", {"a.py": "1\n"}, {"a.py": "2\n"})
    (tmp_path / "repo" / "pkg").mkdir()
    real = git.run_git

    def old_git(cwd: str | Path, *args: str, **kw: object) -> bytes:
        if "--path-format=absolute" in args and "--show-toplevel" in args:
            return b"false\n"  # printed before it stopped at the option it does not know
        return real(cwd, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(git, "run_git", old_git)
    monkeypatch.setattr(git, "open_repo", lambda p: pytest.fail("GitPython asked for a work tree's top level"))
    git._COMMON_DIRS.clear()
    root, common = git.repo_dirs(rb.root / "pkg")
    assert root.resolve() == rb.root.resolve() and common.resolve() == (rb.root / ".git").resolve()
