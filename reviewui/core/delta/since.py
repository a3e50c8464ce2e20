"""Since when: the reviewer's own latest verdict on a branch, or the head they name.

`latest_own_verdict` is the one place that decides which verdict the
since-verdict view starts from: the newest review of the branch that is the
local reviewer's and shown as theirs, among those that count (the verdict
relation, notes/relation.py: their good signature, or unsigned and recorded
in this clone). A review that only claims to be theirs, or anyone else's, is
never "your" verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reviewui.core.errors import ReviewError
from reviewui.core.git import git_text, rev_parse
from reviewui.core.notes.model import Review


@dataclass(frozen=True)
class Since:
    """Where a delta starts: a head judged, its base, and the verdict that judged it (if one did)."""

    head: str
    """The head judged (SHA)."""
    base: str
    """The base its patch was taken from (SHA)."""
    review: Review | None
    """The reviewer's verdict on it; None when the head was named with `--since`."""

    def words(self) -> str:
        """`since your approve of 2026-11-29 17:00` or `since 1a2b3c4d5e`."""
        if self.review is None:
            return f"since {self.head[:10]}"
        return f"since your {self.review.verdict} of {self.review.at.strftime('%Y-%m-%d %H:%M')}"


def latest_own_verdict(repo_dir: str | Path, branch: str, head: str, ref: str, base: str | None = None) -> Review | None:
    """The newest verdict on `branch` that is the local reviewer's own and counts as such, or None.

    `base` is the merge-base the branch is reviewed against (default: `head`: which of the reviewer's
    verdicts is newest does not depend on it).
    """
    from reviewui.core.notes.relation import Trust, branch_verdicts
    from reviewui.core.notes.trust import email_of

    trust = Trust.local(repo_dir)
    if not trust.me.email:
        return None
    notes = branch_verdicts(repo_dir, branch, base or head, head, ref, trust=trust)
    mine = [w.review for w in notes.reviews
            if w.counts and w.review.branch == branch and w.shown_as == w.review.reviewer
            and email_of(w.review.reviewer) == trust.me.email]
    return max(mine, key=lambda r: r.at) if mine else None


def resolve_since(repo_dir: str | Path, branch: str, head: str, base_ref: str, ref: str,
                  rev: str | None = None) -> Since | None:
    """Where the delta of `branch` starts: `rev` when given, else the head of the reviewer's latest verdict.

    `rev`'s base is its merge-base with `base_ref`. Returns None with no `rev` and no
    verdict of the reviewer's; raises ReviewError when `rev` or the verdict's commits
    are not in this repository.
    """
    if rev is not None:
        sha = rev_parse(repo_dir, rev)
        if sha is None:
            raise ReviewError(f"--since: no such commit: {rev}")
        base = git_text(repo_dir, "merge-base", base_ref, sha, check=False) or sha
        return Since(sha, base, None)
    base = git_text(repo_dir, "merge-base", base_ref, head, check=False) or head
    review = latest_own_verdict(repo_dir, branch, head, ref, base)
    if review is None:
        return None
    for sha in (review.head, review.base):
        if rev_parse(repo_dir, sha) is None:
            raise ReviewError(f"your {review.verdict} of {review.at_iso()} judged {review.head[:10]}, "
                              f"which is not in this repository (fetch it to see what changed since)")
    return Since(review.head, review.base, review)

