"""A scratch tree has one mtime for every file and directory, before and after a revert or an edit."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from reviewui.core.run.scratch_build import staged_commit
from reviewui.core.run.worktree import WorktreePool
from tests.core.bite.helpers import load
from tests.gitrepo import make_repo


def _mtimes(root: Path) -> set[int]:
    found = {root.stat().st_mtime_ns}
    for folder, dirs, names in os.walk(root):
        found.update(os.lstat(os.path.join(folder, n)).st_mtime_ns for n in [*dirs, *names])
    return found


def test_every_file_keeps_the_trees_one_mtime_through_reverts_and_edits(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n"},
                   {"pkg/calc.py": "def add(a, b):\n    return a + b\n", "pkg/new.py": "X = 1\n",
                    "tests/test_calc.py": "def test_x():\n    pass\n"})
    t, d = load(rb.root)
    with WorktreePool(rb.root, 1) as pool, pool.acquire() as scratch:
        scratch.checkout(t.head)
        [stamp] = _mtimes(scratch.path)
        time.sleep(0.02)  # any write from here on would carry a later mtime
        calc = d.file("pkg/calc.py")
        scratch.revert_hunk(calc, calc.hunks[0])
        assert _mtimes(scratch.path) == {stamp}
        assert "a - b" in (scratch.path / "pkg/calc.py").read_text()
        scratch.checkout(t.head)
        new = d.file("pkg/new.py")
        scratch.revert_hunk(new, new.hunks[0])  # an added file reverted: deleted, its directory changed
        assert not (scratch.path / "pkg/new.py").exists() and _mtimes(scratch.path) == {stamp}
        scratch.checkout(t.head)
        staged_commit(scratch.path, {"pkg/calc.py": b"garbage\n"}, tmp_path / "index")
        assert _mtimes(scratch.path) == {stamp}
        # git still sees the truth: a revert of the same size and the one mtime is committed as it is
        scratch.checkout(t.head)
        scratch.revert_hunk(calc, calc.hunks[0])
        git = lambda *a: subprocess.run(["git", *a], cwd=scratch.path, capture_output=True, text=True).stdout  # noqa: E731
        assert git("status", "--porcelain") == "" and "a - b" in git("cat-file", "-p", "HEAD:pkg/calc.py")
        (scratch.path / "pkg/calc.py").write_text("def add(a, b):\n    return a * b\n")  # an ordinary write
        assert git("status", "--porcelain").strip() == "M pkg/calc.py"
