"""A shared bare origin for notes tests: main with calc.py, agent/work swapping its operands."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True)


def bare_origin(tmp_path: Path) -> Path:
    """Build `tmp_path/origin.git` (bare) from a seed repo with main and agent/work; return its path."""
    seed = tmp_path / "seed"
    seed.mkdir()
    _git(seed, "init", "-q", "-b", "main")
    _git(seed, "config", "user.name", "Seed")
    _git(seed, "config", "user.email", "seed@example.com")
    (seed / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    _git(seed, "add", ".")
    _git(seed, "commit", "-qm", "base")
    _git(seed, "checkout", "-qb", "agent/work")
    (seed / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    _git(seed, "commit", "-qam", "swap")
    _git(tmp_path, "clone", "-q", "--bare", str(seed), "origin.git")
    return tmp_path / "origin.git"


def isolate_git(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point git at an empty global config in `home` and drop identity variables from the environment."""
    (home / "gitconfig").write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_DIR"):
        monkeypatch.delenv(var, raising=False)
