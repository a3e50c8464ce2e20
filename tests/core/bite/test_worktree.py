"""Scratch worktree slots: locking, recovery of broken or abandoned scratches, pruning only our own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reviewui.core.run.worktree import WorktreePool, scratch_root
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
    from reviewui.core.run.worktree import scratch_root
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
