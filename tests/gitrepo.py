"""Build real git repositories for tests: a base commit on main, a branch on top.

`RepoBuilder` writes files (str or bytes; None deletes), commits with a fixed
identity and dates so SHAs are stable, and creates branches. Tests use it
to reproduce the shapes of change reviewui must handle.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Mapping

ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class RepoBuilder:
    """A scratch git repository with helpers to commit file states."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.name", "Test Reviewer")
        self.git("config", "user.email", "reviewer@example.com")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str, input: bytes | None = None) -> str:
        """Run git in the repo and return stdout (raises on failure)."""
        env = {**os.environ, **ENV}
        proc = subprocess.run(
            ["git", *args], cwd=self.root, env=env, input=input, capture_output=True, check=True
        )
        return proc.stdout.decode("utf-8", "replace").strip()

    def write(self, files: Mapping[str, str | bytes | None]) -> None:
        """Write (or delete, for None) files in the working tree."""
        for rel, content in files.items():
            p = self.root / rel
            if content is None:
                if p.exists():
                    p.unlink()
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                p.write_bytes(content)
            else:
                p.write_bytes(content.encode("utf-8"))

    def commit(self, files: Mapping[str, str | bytes | None], message: str = "change") -> str:
        """Write files, stage everything, commit, and return the new SHA."""
        self.write(files)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def branch(self, name: str, start: str = "main") -> None:
        """Create branch `name` at `start` and check it out."""
        self.git("checkout", "-q", "-b", name, start)

    def checkout(self, ref: str) -> None:
        """Check out an existing ref."""
        self.git("checkout", "-q", ref)

    def snapshot(self) -> dict[str, object]:
        """Everything about the reviewer's state that reviewui must never change."""
        index = self.root / ".git" / "index"
        files = {}
        for p in sorted(self.root.rglob("*")):
            if ".git" in p.relative_to(self.root).parts or not p.is_file():
                continue
            files[str(p.relative_to(self.root))] = p.read_bytes()
        return {
            "head": self.git("rev-parse", "HEAD"),
            "symbolic": self.git("symbolic-ref", "-q", "HEAD") if self._attached() else None,
            "refs": self.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags"),
            "stash": self.git("stash", "list"),
            "status": self.git("status", "--porcelain", "--untracked-files=all"),
            "index": index.read_bytes() if index.exists() else None,
            "files": files,
        }

    def _attached(self) -> bool:
        try:
            self.git("symbolic-ref", "-q", "HEAD")
            return True
        except subprocess.CalledProcessError:
            return False


def make_repo(
    root: Path,
    base: Mapping[str, str | bytes | None],
    branch: Mapping[str, str | bytes | None],
    name: str = "agent/work",
    stay: str = "main",
) -> RepoBuilder:
    """A repo with `base` committed on main and `branch` committed on `name`.

    The reviewer's checkout is left on `stay` (main by default), as when a
    reviewer reviews someone else's branch.
    """
    rb = RepoBuilder(root)
    rb.commit(base, "base")
    rb.branch(name)
    rb.commit(branch, "agent change")
    rb.checkout(stay)
    return rb
