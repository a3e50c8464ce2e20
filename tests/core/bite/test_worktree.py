"""Scratch worktree slots: locking, recovery of broken or abandoned scratches, pruning only our own."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from reviewui.core.run.scratch_slots import scratch_root
from reviewui.core.run.worktree import WorktreePool
from tests.gitrepo import make_repo


@pytest.fixture()
def repo(tmp_path: Path):
    return make_repo(tmp_path / "repo", {"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})


def test_two_pools_never_share_a_slot(repo) -> None:
    with WorktreePool(repo.root, 1) as p1, WorktreePool(repo.root, 1) as p2:
        assert p1.scratches[0].path != p2.scratches[0].path
    with WorktreePool(repo.root, 1) as p3:  # released: slot 0 is free again
        assert p3.scratches[0].slot == 0


def test_broken_scratch_is_replaced(repo) -> None:
    before = repo.snapshot()
    with WorktreePool(repo.root, 1) as pool, pool.acquire() as s:
        s.checkout("agent/work")
        path = s.path
    # Someone wiped the scratch (closing the pool already empties it) and left junk in its place.
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    (path / "junk.txt").write_text("x")
    (path / ".git").write_text("gitdir: /nonexistent\n")
    with WorktreePool(repo.root, 1) as pool, pool.acquire() as s:
        s.checkout("agent/work")
        assert (s.path / "a.py").read_text() == "x = 2\n" and not (s.path / "junk.txt").exists()
        # a repository of its own whose HEAD is the tree under test (not a worktree of the reviewer's)
        assert (s.path / ".git").is_dir()
        assert repo.git("-C", str(s.path), "rev-parse", "HEAD^{tree}") == repo.git("rev-parse", "agent/work^{tree}")
    listed = repo.git("worktree", "list", "--porcelain")
    assert listed.count("worktree ") == 1  # nothing registered in the reviewer's repository
    assert repo.snapshot() == before


def test_abandoned_lock_is_taken_over(repo) -> None:
    root = scratch_root(repo.root)
    root.mkdir(parents=True)
    (root / "0.lock").write_text("999999999")  # a pid that cannot be alive, no flock held
    with WorktreePool(repo.root, 1) as pool:
        assert pool.scratches[0].slot == 0
        assert (root / "0.lock").read_text() != "999999999"
    assert (root / "0.lock").read_text() == ""


def test_only_our_stale_registrations_are_pruned(repo, tmp_path: Path) -> None:
    mine = tmp_path / "users-own-worktree"
    repo.git("worktree", "add", "--detach", str(mine), "main")
    shutil.rmtree(mine)  # e.g. on an unmounted drive: git would call it prunable
    # a scratch registered by a reviewui from before the sandbox, since deleted
    from reviewui.core.run.scratch_slots import scratch_root
    legacy = scratch_root(repo.root, "worktrees") / "0"
    repo.git("worktree", "add", "--detach", str(legacy), "main")
    shutil.rmtree(legacy)
    with WorktreePool(repo.root, 1) as pool, pool.acquire() as s:
        s.checkout("main")
    listed = repo.git("worktree", "list", "--porcelain")
    assert str(mine) in listed  # the reviewer's own registration survives
    assert str(legacy) not in listed  # the old scratch registration is gone
    assert listed.count("prunable") == 1


def test_acquire_lends_the_preferred_slot_when_it_is_free(repo) -> None:
    import threading

    with WorktreePool(repo.root, size=2) as pool:
        a, b = pool.scratches
        with pool.acquire(prefer=b) as got:
            assert got is b
            with pool.acquire(prefer=b) as other:  # b is lent: the free one instead
                assert other is a
        done: list[object] = []

        def wait_for_one() -> None:
            with pool.acquire(prefer=a) as s:
                done.append(s)

        with pool.acquire() as x, pool.acquire() as y:
            assert {x.slot, y.slot} == {a.slot, b.slot}
            t = threading.Thread(target=wait_for_one)
            t.start()
            t.join(0.2)
            assert done == []  # both lent: it waits
        t.join(5)
        assert done == [a]


def _tree(root: Path) -> dict[str, tuple[str, bytes | str, int]]:
    """Every entry under `root` (`.git` included): its kind, its bytes (a link: its target) and mtime."""
    out: dict[str, tuple[str, bytes | str, int]] = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        kind = "link" if p.is_symlink() else "dir" if p.is_dir() else "file"
        body: bytes | str = os.readlink(p) if kind == "link" else p.read_bytes() if kind == "file" else b""
        out[str(p.relative_to(root))] = (kind, body, st.st_mtime_ns)
    return out


@pytest.mark.parametrize("level", ["tmpfs", "watch"])
def test_a_second_checkout_of_the_same_commit_puts_back_exactly_the_head(repo, monkeypatch, level: str) -> None:
    """Where no run writes the slot (sized storage) only reviewui's own edits are put back, not the
    whole tree copied again; either way the scratch is the head's, byte for byte, mtimes and `.git` too."""
    from reviewui.core.run import scratch, storage

    monkeypatch.setattr(storage, "level", lambda: level)
    copies: list[str] = []
    real = shutil.copytree

    def spy(src, dst, *a, **k):  # type: ignore[no-untyped-def]
        copies.append(Path(dst).name)
        return real(src, dst, *a, **k)

    with WorktreePool(repo.root, 1) as pool, pool.acquire() as s:
        s.checkout("agent/work")
        fresh = _tree(s.path)
        s.edit_files({"a.py": b"x = 3\n", "new/deep/test_probe.py": b"def test_p():\n    pass\n"})
        s.add_file("b.txt", "more")
        assert _tree(s.path) != fresh
        monkeypatch.setattr(scratch.shutil, "copytree", spy)
        s.checkout("agent/work")
        assert _tree(s.path) == fresh
        # (copytree also calls itself for each folder: the first call says what was copied)
        assert copies[0] == (".git" if level == "tmpfs" else "tree") and ("tree" in copies) == (level != "tmpfs")
        copies.clear()
        s.checkout("main")  # another commit: copied afresh
        assert (s.path / "a.py").read_text() == "x = 1\n" and copies[0] == "tree"


def test_a_pool_asks_git_once_after_the_target_did_and_hides_the_repository(repo, monkeypatch) -> None:
    # Every sweep makes a pool, and every git process is time before its baseline: the shared git
    # dir is the one the target already asked for (git_common_dir's cache), the git dir and the top
    # level one rev-parse. What the pool hides from runs is the same as when each was asked alone.
    from reviewui.core import git
    from reviewui.core.run import sandbox

    git.git_common_dir(repo.root)  # as resolve_target does first
    asked: list[tuple[str, ...]] = []
    real = git.run_git

    def counting(cwd, *args, **kwargs):
        asked.append(args)
        return real(cwd, *args, **kwargs)

    hidden: list[tuple[object, ...]] = []
    monkeypatch.setattr(git, "run_git", counting)
    monkeypatch.setattr(sandbox, "hide", lambda *paths: hidden.append(paths))
    pool = WorktreePool(repo.root, 1)
    assert asked == [("rev-parse", "--absolute-git-dir", "--show-toplevel")]
    dot_git = (repo.root / ".git").resolve()
    assert pool.common_dir == dot_git
    assert hidden == [(repo.root.resolve(), dot_git, dot_git, str(repo.root.resolve()), pool.root)]


def test_a_pool_refuses_when_git_names_no_git_dir(repo, monkeypatch) -> None:
    # An empty answer must not become Path("") (the current directory) in what runs are hidden from.
    from reviewui.core.errors import ReviewError
    from reviewui.core.run import worktree

    monkeypatch.setattr(worktree, "git_text", lambda *args, **kwargs: "")
    with pytest.raises(ReviewError, match="not a git repository"):
        WorktreePool(repo.root, 1)
