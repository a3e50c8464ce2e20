"""Staging a revert's commit and index in Python gives what git's own staging gives, id for id."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reviewui.core.run.staging import Stager
from reviewui.core.run.scratch_build import staged_commit
from reviewui.core.run.worktree import WorktreePool
from tests.gitrepo import make_repo

BASE = {"pkg/__init__.py": "", "pkg/a.py": "A = 1\n", "pkg/sub/b.py": "B = 1\n", "run.sh": "echo hi\n",
        "docs/only.txt": "x\n"}


def _ls(scratch: Path, index: Path) -> str:
    env = {"GIT_DIR": str(scratch / ".git"), "GIT_WORK_TREE": str(scratch), "GIT_INDEX_FILE": str(index),
           "PATH": "/usr/bin:/bin", "HOME": str(scratch)}
    return subprocess.run(["git", "ls-files", "-s"], cwd=scratch, env=env, capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.parametrize("files", [
    {"pkg/a.py": b"A = 2\n"},  # a change
    {"pkg/a.py": b"A = 1\n"},  # a null revert: the file's own bytes
    {"pkg/sub/b.py": None},  # a deletion that empties its folder
    {"docs/only.txt": None, "pkg/a.py": b"A = 3\n"},
    {"pkg/new/deep/c.py": b"C = 1\n"},  # a file the head lacks, in folders it lacks
    {"run.sh": b"echo bye\n"},  # an executable keeps its mode
], ids=["change", "null", "delete", "two", "new", "mode"])
def test_python_staging_is_gits(tmp_path: Path, files: dict[str, bytes | None]) -> None:
    rb = make_repo(tmp_path / "r", BASE, {**BASE, "pkg/a.py": "A = 1  # branch\n"})
    (rb.root / "run.sh").chmod(0o755)
    subprocess.run(["git", "add", "--chmod=+x", "run.sh"], cwd=rb.root, check=True)
    with WorktreePool(rb.root, 1) as pool, pool.acquire() as s:
        s.checkout("agent/work")
        stager = Stager.of(s.path)
        assert stager is not None
        ours = stager.stage(files, tmp_path / "ours.index")
        theirs = staged_commit(s.path, files, tmp_path / "git.index")
        assert ours == theirs
        assert _ls(s.path, tmp_path / "ours.index") == _ls(s.path, tmp_path / "git.index")
        fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=s.path, capture_output=True, text=True,
                              env={"GIT_DIR": str(s.path / ".git"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
        assert fsck.returncode == 0, fsck.stderr


def test_with_a_store_the_scratch_does_not_grow_and_each_revert_names_its_own_objects(tmp_path: Path) -> None:
    """A batch session's reverts are staged in its run directory: a warm server's slot, sized for the
    tree, would not hold them all (it is replaced), and no fork sees another's objects."""
    rb = make_repo(tmp_path / "r", BASE, {**BASE, "pkg/a.py": "A = 1  # branch\n"})
    with WorktreePool(rb.root, 1) as pool, pool.acquire() as s:
        s.checkout("agent/work")
        before = sorted(p.relative_to(s.path) for p in (s.path / ".git").rglob("*"))
        stager = Stager.of(s.path)
        assert stager is not None
        stager.store = tmp_path / "run"
        made = []
        for n in range(5):
            stager.stage({"pkg/a.py": f"A = {n + 10}\n".encode()}, tmp_path / f"{n}.index")
            made.append(list(stager.made))
        assert sorted(p.relative_to(s.path) for p in (s.path / ".git").rglob("*")) == before
        assert all(m and all((tmp_path / "run" / "objects" / o).is_file() for o in m) for m in made)
        assert len({frozenset(m) for m in made}) == 5  # each revert its own blob, trees and commit
