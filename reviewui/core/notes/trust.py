"""Whose review is it: signatures checked, and a claim to be the local reviewer never taken on trust.

`shown_reviewer` is the one place that decides whom a review is shown
as: a review whose `reviewer` is the local reviewer's identity is shown as
theirs only with a good signature from their own key (their configured
`user.signingkey`, or a key their allowed-signers file / keyring names with
their email); otherwise it is marked as an unverified claim. An unsigned
review claiming them keeps their name only when this clone recorded that
very review itself (provenance.py): one pulled, fetched or of unknown
origin is an unverified claim whether or not they sign.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reviewui.core.errors import ReviewError
from reviewui.core.notes.model import Review, git_identity
from reviewui.core.notes.provenance import RECORDED
from reviewui.core.notes.signing import (
    SignatureCheck,
    local_key_fingerprint,
    signing_setup,
)


@dataclass(frozen=True)
class LocalReviewer:
    """The person running reviewui: their identity and their signing key."""

    identity: str
    """`Name <email>` from git, or "" when git has none."""
    key: str
    """Their signing key's fingerprint, or "" when they have none configured."""

    @property
    def email(self) -> str:
        """The email part of the identity, lower-cased ("" when none)."""
        return email_of(self.identity)


def local_reviewer(repo_dir: str | Path) -> LocalReviewer:
    """Return who is running reviewui in `repo_dir` (never raises for a missing identity or key)."""
    try:
        identity = git_identity(repo_dir)
    except ReviewError:
        identity = ""
    try:
        setup = signing_setup(repo_dir)
        key = local_key_fingerprint(setup) if setup else ""
    except ReviewError:
        key = ""
    return LocalReviewer(identity, key)


def is_theirs(check: SignatureCheck, me: LocalReviewer) -> bool:
    """True when `check` is a good signature by the local reviewer's own key."""
    if check.status != "good":
        return False
    if me.key and check.key and (check.key == me.key or check.key.upper().endswith(me.key.upper())):
        return True
    return bool(me.email) and email_of(check.signer) == me.email


def shown_reviewer(review: Review, check: SignatureCheck, me: LocalReviewer, provenance: str = "") -> str:
    """Whom to show `review` as: its reviewer, or an unverified claim when it claims to be `me` unproven.

    `provenance` is how the review reached this clone (provenance.py; "" when
    unknown). A reviewer with no signing key of their own has only that to
    tell their reviews from a forgery: an unsigned review recorded here keeps
    their name (the signature column says `unsigned` beside it); any other
    is an unverified claim.
    """
    claims_me = bool(me.email) and email_of(review.reviewer) == me.email
    own_unsigned = not me.key and check.status == "unsigned" and provenance == RECORDED
    if claims_me and not is_theirs(check, me) and not own_unsigned:
        return f"unverified (claims to be {review.reviewer})"
    return review.reviewer


def email_of(text: str) -> str:
    """The email of `Name <email>` (or of a bare email), lower-cased; "" when there is none."""
    text = text.strip()
    if "<" in text and text.endswith(">"):
        text = text.rsplit("<", 1)[1][:-1]
    return text.strip().lower() if "@" in text else ""


def self_review(repo_dir: str | Path, head: str, me: LocalReviewer) -> str:
    """One line when `me` is the author of the commit `head` (a verdict on one's own work), else "".

    The author is compared by email (by the whole identity when either has none).
    """
    from reviewui.core.git import run_git

    raw = run_git(repo_dir, "cat-file", "commit", head, check=False).decode("utf-8", "replace")
    line = next((x for x in raw.split("\n\n", 1)[0].splitlines() if x.startswith("author ")), "")
    who = line.removeprefix("author ").rsplit(" ", 2)[0].strip() if line else ""
    if not who or not me.identity:
        return ""
    same = (me.email and email_of(who) == me.email) or (not me.email and who == me.identity)
    return f"you ({me.identity}) are the author of the head commit: a verdict on your own work" if same else ""
