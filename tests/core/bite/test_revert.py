"""Reverting exactly one hunk in a scratch worktree, byte for byte, on awkward files."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.revert import RawHunk, RevertError, revert_bytes
from reviewui.core.run.scratch_slots import scratch_root
from reviewui.core.run.worktree import WorktreePool
from tests.core.bite.helpers import load
from tests.gitrepo import make_repo

FAR = "".join(f"line{i}\n" for i in range(1, 21))  # 20 lines: hunks at both ends stay separate

BASE = {
    "multi.py": FAR,
    "crlf.py": "a = 1\r\nb = 2\r\nc = 3\r\n",
    "noeol.py": "x = 1\ny = 2",
    "latin.py": b"s = '\xe9t\xe9'\nt = 1\n",
    "gone.py": "def old():\n    return 0\n",
    "lone_cr.py": "a = 1\rstill a\nb = 2\n",
}
BRANCH = {
    "multi.py": FAR.replace("line2\n", "LINE2\n").replace("line19\n", "LINE19\n"),
    "crlf.py": "a = 1\r\nb = 22\r\nc = 3\r\n",
    "noeol.py": "x = 1\ny = 3",
    "latin.py": b"s = '\xe9t\xe9!'\nt = 1\n",
    "gone.py": None,
    "added.py": "def new():\n    return 1\n",
    "lone_cr.py": "a = 1\rstill a\nb = 3\n",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("rev") / "repo"
    rb = make_repo(root, BASE, BRANCH)
    t, d = load(root)
    return rb, t, d


@pytest.fixture()
def scratch(repo):
    rb, t, d = repo
    with WorktreePool(t.repo_dir, 1) as pool, pool.acquire() as s:
        s.checkout(t.head)
        yield s


def revert(scratch, d, path: str, index: int = 0) -> bytes | None:
    f = d.file(path)
    scratch.revert_hunk(f, f.hunks[index])
    p = scratch.path / path
    return p.read_bytes() if p.exists() else None


def test_second_hunk_only(repo, scratch) -> None:
    _, _, d = repo
    assert len(d.file("multi.py").hunks) == 2
    got = revert(scratch, d, "multi.py", 1)
    assert got == FAR.replace("line2\n", "LINE2\n").encode()  # hunk 0 stays, hunk 1 undone


@pytest.mark.parametrize("path", ["crlf.py", "noeol.py", "latin.py", "lone_cr.py"])
def test_awkward_bytes_come_back_exactly(repo, scratch, path: str) -> None:
    _, _, d = repo
    want = BASE[path]
    assert revert(scratch, d, path) == (want if isinstance(want, bytes) else want.encode())


def test_added_file_is_removed_and_deleted_file_restored(repo, scratch) -> None:
    _, _, d = repo
    assert revert(scratch, d, "added.py") is None
    assert revert(scratch, d, "gone.py") == BASE["gone.py"].encode()


def test_checkout_resets_reverts_and_untracked_files(repo, scratch) -> None:
    _, t, d = repo
    revert(scratch, d, "crlf.py")
    scratch.add_file("junk/new.txt", "x")
    scratch.add_file("build/__pycache__/m.pyc", b"\0")
    scratch.checkout(t.head)
    assert (scratch.path / "crlf.py").read_bytes() == BRANCH["crlf.py"].encode()
    assert not (scratch.path / "junk").exists() and not (scratch.path / "build").exists()


def test_revert_refuses_when_lines_do_not_match(repo, scratch) -> None:
    _, _, d = repo
    (scratch.path / "crlf.py").write_bytes(b"something else\n")
    f = d.file("crlf.py")
    with pytest.raises(RevertError, match="not at line"):
        scratch.revert_hunk(f, f.hunks[0])


def test_revert_that_changes_nothing_is_refused() -> None:
    raw = RawHunk(1, (b"a\n",), 1, (b"a\n",))
    with pytest.raises(RevertError, match="not change"):
        revert_bytes(b"a\n", raw)


def test_add_file_cannot_escape(scratch) -> None:
    for bad in ("../outside.py", "/etc/passwd", "a/../../x"):
        with pytest.raises(ReviewError, match="escapes"):
            scratch.add_file(bad, "x")


def test_scratch_lives_outside_the_repo_and_leaves_it_untouched(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", BASE, BRANCH)
    before = rb.snapshot()
    t, d = load(rb.root)
    with WorktreePool(t.repo_dir, 2) as pool:
        with pool.acquire() as a, pool.acquire() as b:
            a.checkout(t.head)
            b.checkout(t.base)
            assert a.path != b.path
            assert rb.root not in a.path.parents
            # issue 27: the slots live in a private temp dir (a run sees its path), linked from the cache
            assert (scratch_root(rb.root) / "slots").resolve() in a.path.parents
            assert (b.path / "gone.py").exists() and not (a.path / "gone.py").exists()
            revert(a, d, "multi.py")
    assert rb.snapshot() == before


def test_edit_files_commits_every_file_as_one_head(repo, scratch, monkeypatch) -> None:
    import subprocess

    from reviewui.core.run import scratch_build

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=scratch.path, capture_output=True, text=True, check=True).stdout

    real, commits = scratch_build.scratch_git, []

    def counting(path, gd, *args, **kw):
        commits.extend(args[:1] if args[:1] == ("commit-tree",) else ())
        return real(path, gd, *args, **kw)

    monkeypatch.setattr(scratch_build, "scratch_git", counting)
    scratch.edit_files({"multi.py": b"garbage\n", "sub/new.py": b"x = 1\n"})
    assert len(commits) == 1  # one commit for all: each costs four git processes
    assert git("status", "--porcelain") == ""  # the code under test cannot ask git what was edited
    assert git("show", "HEAD:multi.py") == "garbage\n" and git("show", "HEAD:sub/new.py") == "x = 1\n"
