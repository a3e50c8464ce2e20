"""Deterministic generated repositories for the benchmarks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=ENV, check=True, capture_output=True)


def big_branch(root: Path, files: int = 400, lines_per_file: int = 100) -> Path:
    """A repo whose branch `agent/big` changes `files` files by about `lines_per_file` lines each.

    With the defaults that is 400 files and ~40k changed lines (20k added, 20k removed).
    """
    if (root / ".git").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for i in range(files):
        p = root / f"pkg{i % 20}" / f"mod{i}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        body = [f"def f{i}_{k}(x):\n    return x + {k}\n" for k in range(lines_per_file // 2)]
        p.write_text("".join(body))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "agent/big")
    for i in range(files):
        p = root / f"pkg{i % 20}" / f"mod{i}.py"
        body = [f"def f{i}_{k}(x):\n    return x * {k} + 1\n" for k in range(lines_per_file // 2)]
        p.write_text("".join(body))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "agent rewrite")
    git(root, "checkout", "-q", "main")
    return root
