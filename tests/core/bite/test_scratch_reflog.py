"""No scratch keeps a reflog: not the pristine, not after a revert or an edit, not one an older
reviewui built (its lines would tell a run's kind: tests/hostile/test_reflog.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from reviewui.core.run.worktree import WorktreePool
from tests.core.bite.helpers import load
from tests.gitrepo import make_repo


def test_no_scratch_keeps_a_reflog(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n"},
                   {"pkg/calc.py": "def add(a, b):\n    return a + b\n"})
    t, d = load(rb.root)
    with WorktreePool(rb.root, 1) as pool, pool.acquire() as scratch:
        scratch.checkout(t.head)
        git = scratch.path / ".git"
        config = lambda: subprocess.run(["git", "config", "core.logAllRefUpdates"], cwd=scratch.path,  # noqa: E731
                                        capture_output=True, text=True).stdout.strip()
        assert not (git / "logs").exists() and config() == "false"
        calc = d.file("pkg/calc.py")
        scratch.revert_hunk(calc, calc.hunks[0])  # update-ref moves HEAD to another commit
        scratch.edit_files({"pkg/calc.py": b"X = 1\n"})
        assert not (git / "logs").exists()
        # A pristine built with a reflog (an older reviewui's) is built again, none in it.
        [pristine] = [p for p in (pool.root / "pristine").iterdir() if p.is_dir() and not p.name.startswith(".")]
        (pristine / ".git" / "logs").mkdir()
        (pristine / ".git" / "logs" / "HEAD").write_text("old\n")
        scratch.checkout(t.head)
        assert not (git / "logs").exists() and not (pristine / ".git" / "logs").exists() and config() == "false"
        assert (scratch.path / "pkg/calc.py").read_text() == "def add(a, b):\n    return a + b\n"
