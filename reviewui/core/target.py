"""Resolve what is being reviewed: repository, branch, base and merge-base.

The diff is merge-base..branch head, like a pull request: commits on the
base branch since the agent forked do not show up as the agent's change.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reviewui.core.errors import ReviewError
from reviewui.core.git import git_text, repo_dirs, rev_parse, run_git

DEFAULT_BRANCH_CANDIDATES: tuple[str, ...] = ("main", "master", "trunk")


@dataclass(frozen=True)
class Target:
    """One branch under review, pinned to commit SHAs."""

    repo_dir: Path
    """Root of the reviewer's working tree (never modified)."""
    git_dir: Path
    """The repository's common git directory."""
    branch: str
    """The branch name as given (or `HEAD` when detached)."""
    head: str
    """SHA of the branch head."""
    base: str
    """SHA of the merge-base of the branch and the base ref."""
    base_ref: str
    """What the base was resolved from (`main`, `origin/HEAD`, a SHA…)."""
    commits: int
    """Number of commits on the branch beyond its base."""

    @property
    def is_empty(self) -> bool:
        """True when the branch has no commits beyond its base."""
        return self.head == self.base


def resolve_target(
    repo: str | Path | None = None,
    branch: str | None = None,
    base: str | None = None,
) -> Target:
    """Resolve a review target from the user's words.

    `repo` defaults to the current directory, `branch` to the checked-out
    branch, `base` to the repository's default branch (origin/HEAD, else
    main, master, trunk). Raises ReviewError for anything the user can fix.
    """
    top, git_dir = repo_dirs(repo or Path.cwd())
    root = top.resolve()
    if branch is None:
        if rev_parse(root, "HEAD") is None:
            raise ReviewError(f"repository has no commits yet: {root}")
        branch = git_text(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False) or "HEAD"
    if branch.startswith("-"):
        raise ReviewError(f"not a branch name: {branch}")
    head = rev_parse(root, branch)
    if head is None:
        raise ReviewError(f"unknown branch: {branch}")
    if base is None:
        base_ref = default_base_ref(root)
    else:
        if base.startswith("-") or rev_parse(root, base) is None:
            raise ReviewError(f"unknown base: {base}")
        base_ref = base
    base_sha = rev_parse(root, base_ref)
    assert base_sha is not None  # default_base_ref only returns resolvable refs
    mb = run_git(root, "merge-base", base_sha, head, check=False).decode().strip()
    if not mb:
        raise ReviewError(f"{branch} and {base_ref} have no common ancestor")
    count = int(git_text(root, "rev-list", "--count", f"{mb}..{head}") or 0)
    return Target(
        repo_dir=root,
        git_dir=git_dir,
        branch=branch,
        head=head,
        base=mb,
        base_ref=base_ref,
        commits=count,
    )


def default_base_ref(repo_dir: Path) -> str:
    """Return the repository's default branch: origin/HEAD, else main, master, trunk.

    Raises ReviewError when none of them exists.
    """
    origin_head = run_git(
        repo_dir, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD", check=False
    ).decode().strip()
    if origin_head and rev_parse(repo_dir, origin_head):
        return origin_head.removeprefix("refs/remotes/")
    for name in DEFAULT_BRANCH_CANDIDATES:
        for ref, full in ((name, f"refs/heads/{name}"), (f"origin/{name}", f"refs/remotes/origin/{name}")):
            if rev_parse(repo_dir, full):
                return ref
    raise ReviewError("cannot find a base branch (no origin/HEAD, main, master or trunk); pass --base REF")
