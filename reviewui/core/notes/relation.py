"""The verdict relation: what each review in the notes means for a branch now, and which verdicts stand.

Anyone who can push the notes ref can write a `[[review]]` in anyone's name,
date it 2099 and attach it to any commit. So no front end reads reviews
directly: the queue, `log`, the history screen, the app's header and
`verify` all ask `weigh` (or `branch_verdicts`), which gives every review of
a branch these facts, each computed here and nowhere else:

- **signature**: `trusted` (a good signature by a key the trust settings
  list: git's own, or `verify`'s allowed signers), `untrusted` (whole, but by
  a key not listed or not known), `bad` (does not verify) or `unsigned`;
- **provenance**: `recorded here`, `pulled from REMOTE`, or "" (this clone
  does not know: a plain fetch, or before reviewui kept it);
- **claims you**: its `reviewer` is the local reviewer's identity, and
  nothing proves it is theirs (trust.py);
- **on the branch**: whether the note sits on one of the branch's own commits
  (base..head) or its head;
- **currency**: `this-head` (it judged the head itself), `same-patch` (an
  earlier head whose verbatim patch id equals base..head's now: a rebase that
  changed no byte of the patch) or `outdated` (the patch changed since,
  whitespace included: patchid.py).

A review **counts** only when its signature is trusted, or when it is
unsigned and this clone recorded it itself (`recorded here`, which nothing
from outside can forge: provenance.py) and it does not claim someone it
cannot prove to be; `verify` counts signatures only. An unsigned, untrusted
or bad review never makes a branch approved, however it is dated; a pulled
one is labelled. Each reviewer's latest counting review **stands**
(`standing`); the branch's **verdict** is a current reject of any standing
reviewer, else the latest current approve, else the latest standing review
(outdated). What changed since a review (issue 40's "re-review what changed")
can start from a WeighedReview's `review.head` and `review.patch_id`.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal

from reviewui.core.errors import ReviewError
from reviewui.core.git import config_value, rev_parse, run_git
from reviewui.core.notes import provenance
from reviewui.core.notes.index import NotesIndex, notes_index
from reviewui.core.notes.body import NoteChunk
from reviewui.core.notes.model import Review
from reviewui.core.notes.patchid import patch_id
from reviewui.core.notes.signing import SignatureCheck, Signers, verify_chunk
from reviewui.core.notes.trust import LocalReviewer, email_of, local_reviewer, shown_reviewer
from reviewui.core.notes.view import ForeignText, foreign_why

SignatureState = Literal["trusted", "untrusted", "bad", "unsigned"]
Currency = Literal["this-head", "same-patch", "outdated"]
MAX_BRANCH_COMMITS = 100_000
"""Commits of base..head looked at to say whether a note sits on the branch."""


@dataclass(frozen=True)
class Trust:
    """Who is asking, and whose signatures count."""

    me: LocalReviewer
    """The local reviewer (identity and signing key)."""
    provenance: dict[str, str]
    """Where each review came from, as this clone saw it (provenance.load)."""
    signers: Signers | None = None
    """None: git's own trust settings; else only these signers (`reviewui verify`)."""
    local_counts: bool = True
    """An unsigned review this clone recorded itself counts (False for `verify`: signatures only)."""
    fingerprint: str = ""
    """What the signature checks depend on beside the note (config, key files): the check cache's key."""

    @classmethod
    def local(cls, repo_dir: str | Path, signers: Signers | None = None, local_counts: bool = True) -> Trust:
        """The trust of the reviewer running reviewui in `repo_dir` (git's settings, or `signers`)."""
        return cls(local_reviewer(repo_dir), provenance.load(repo_dir), signers, local_counts,
                   _trust_fingerprint(repo_dir, signers))


@dataclass(frozen=True)
class WeighedReview:
    """One review and what it means for the branch now (see the module docstring)."""

    review: Review
    """The review as written (its `reviewer` is only what it claims)."""
    check: SignatureCheck
    """The check of its signature."""
    provenance: str
    """`recorded here`, `pulled from <remote>`, or "" when this clone does not know."""
    shown_as: str
    """Whom it is shown as: its reviewer, or `unverified (claims to be …)`."""
    commit: str
    """The commit whose note holds it."""
    on_branch: bool
    """The note sits on the branch's head or one of its commits beyond the base."""
    currency: Currency
    """How it relates to the head now."""
    counts: bool
    """It can stand as its reviewer's verdict."""
    why_not: str = ""
    """When it does not count: why, in a few words."""

    @property
    def signature(self) -> SignatureState:
        """`trusted`, `untrusted`, `bad` or `unsigned`."""
        state = self.check.state
        return state if state in ("trusted", "untrusted", "bad") else "unsigned"  # type: ignore[return-value]

    @property
    def claims_you(self) -> bool:
        """Its reviewer is the local reviewer, unproven."""
        return self.shown_as != self.review.reviewer

    @property
    def current(self) -> bool:
        """It judged this patch (this head, or a rebase of it that changed no byte of the patch)."""
        return self.currency != "outdated"

    @property
    def reviewer(self) -> str:
        """Who it stands for: the signer of a trusted signature, else the reviewer it names."""
        return self.check.signer if self.signature == "trusted" else self.review.reviewer

    def signature_words(self) -> str:
        """The signature and provenance in words, e.g. `signed by bob@x · pulled from origin`."""
        words = self.check.words()
        return f"{words} · {self.provenance}" if self.provenance and self.provenance != provenance.RECORDED else words


@dataclass(frozen=True)
class BranchVerdicts:
    """Every review of a branch, weighed, and the verdicts that stand."""

    reviews: tuple[WeighedReview, ...]
    """Each review once, oldest first."""
    foreign: tuple[ForeignText, ...]
    """Text of those notes that is no review (or no part of one), in note order."""
    patch_id: str
    """The verbatim patch id of base..head now ("" for an empty diff, or when no review needed it)."""
    too_big: tuple[tuple[str, int], ...] = ()
    """(commit, size) of notes on the branch too large to read (max-input-bytes)."""

    @property
    def standing(self) -> tuple[WeighedReview, ...]:
        """Each reviewer's latest review that counts, oldest first."""
        latest: dict[str, WeighedReview] = {}
        for w in self.reviews:
            if w.counts:
                who = email_of(w.reviewer) or w.reviewer
                if who not in latest or latest[who].review.at <= w.review.at:
                    latest[who] = w
        return tuple(sorted(latest.values(), key=lambda w: w.review.at))

    @property
    def verdict(self) -> WeighedReview | None:
        """The branch's verdict now: a current reject of a standing reviewer, else the latest current
        approve, else the latest standing review (then outdated); None when no review counts."""
        standing = self.standing
        for word in ("reject", "approve"):
            now = [w for w in standing if w.current and w.review.verdict == word]
            if now:
                return now[-1]
        return standing[-1] if standing else None

    @property
    def not_counted(self) -> tuple[WeighedReview, ...]:
        """The reviews that do not count (unsigned from elsewhere, untrusted or bad signatures, claims)."""
        return tuple(w for w in self.reviews if not w.counts)


def branch_verdicts(repo_dir: str | Path, branch: str, base: str, head: str, ref: str,
                    trust: Trust | None = None, index: NotesIndex | None = None) -> BranchVerdicts:
    """Weigh every review of `branch` (base..head now) under notes `ref`, as the local reviewer trusts.

    Raises ReviewError for an unknown base or head, or when a note on the
    branch is over the input cap (it is not read).
    """
    head_sha, base_sha = rev_parse(repo_dir, head), rev_parse(repo_dir, base)
    if head_sha is None or base_sha is None:
        raise ReviewError(f"no such commit: {head if head_sha is None else base}")
    index = index or notes_index(repo_dir, ref)
    commits = branch_commits(repo_dir, base_sha, head_sha)
    big = sorted((c, n) for c, n in index.too_big.items() if c in commits or c == head_sha)
    if big:
        from reviewui.core.bounded import limit

        obj, size = big[0]
        raise ReviewError(f"note blob on {obj[:12]} is larger than {limit('note'):,} bytes (max-input-bytes); "
                          f"not read ({size:,} bytes)")
    return weigh(repo_dir, index, branch, head_sha, trust=trust or Trust.local(repo_dir), branch_commits=commits,
                 patch_now=lambda: patch_id(repo_dir, base_sha, head_sha))


def branch_commits(repo_dir: str | Path, base: str, head: str) -> frozenset[str]:
    """The commits of base..head (at most MAX_BRANCH_COMMITS of them)."""
    out = run_git(repo_dir, "rev-list", f"--max-count={MAX_BRANCH_COMMITS}", f"^{base}", head, check=False)
    return frozenset(out.decode("ascii", "replace").split())


def weigh(repo_dir: str | Path, index: NotesIndex, branch: str, head: str, *, trust: Trust,
          branch_commits: frozenset[str], patch_now: Callable[[], str] | str) -> BranchVerdicts:
    """Weigh the reviews of `branch` at `head` in `index` (see the module docstring).

    `patch_now` is base..head's verbatim patch id, or a function computing it
    (called only when a review judged another head). Signature checks are
    kept per chunk and trust (a check may start ssh-keygen or gpg).
    """
    candidates, foreign = _candidates(index, branch, head)
    weighed: list[WeighedReview] = []
    now: str | None = patch_now if isinstance(patch_now, str) else None
    for rid, copies in candidates.items():
        first = copies[0][0].review
        assert first is not None
        if first.branch != branch and not any(obj == head for _, obj in copies):
            continue  # only this branch's reviews are checked: each check may run ssh-keygen or gpg
        checks = {c.text: _check(repo_dir, c.text, trust) for c, _ in copies}
        pick, obj = next(((c, o) for c, o in copies if checks[c.text].status == "good"), copies[0])
        r = pick.review
        assert r is not None
        for chunk, where in copies:
            if chunk.review != r or checks[chunk.text].status != checks[pick.text].status:
                foreign.append(ForeignText(where, chunk.text, f"another copy of review {rid[:8]} that differs"))
        if r.head != head and now is None:
            now = patch_now() if callable(patch_now) else patch_now
        weighed.append(_weigh_one(r, checks[pick.text], obj, head, now or "", trust, branch_commits))
    weighed.sort(key=lambda w: w.review.at)
    return BranchVerdicts(tuple(weighed), tuple(foreign), now or "")


def currency(review: Review, head: str, patch_now: str) -> Currency:
    """How `review` relates to the branch at `head` whose base..head verbatim patch id is `patch_now`."""
    if review.head == head:
        return "this-head"
    # An empty diff has patch id "": equal only counts when it is a real id.
    if patch_now and review.patch_id == patch_now:
        return "same-patch"
    return "outdated"


def _weigh_one(r: Review, check: SignatureCheck, obj: str, head: str, now: str, trust: Trust,
               commits: frozenset[str]) -> WeighedReview:
    came = trust.provenance.get(provenance.key(r), "")
    shown = shown_reviewer(r, check, trust.me, came)
    state = check.state
    if state == "trusted":
        counts, why = True, ""
    elif shown != r.reviewer:
        counts, why = False, f"claims to be {r.reviewer}"
    elif state == "unsigned" and came == provenance.RECORDED and trust.local_counts:
        counts, why = True, ""
    elif state == "unsigned":
        counts, why = False, "unsigned" + (f", {came}" if came else ", of unknown origin")
    else:
        counts, why = False, check.words()
    return WeighedReview(r, check, came, shown, obj, obj == head or obj in commits, currency(r, head, now),
                         counts, why)


def _candidates(index: NotesIndex, branch: str, head: str) -> tuple[dict[str, list[tuple[NoteChunk, str]]],
                                                                      list[ForeignText]]:
    """Review id -> its copies (chunk, commit) in the notes of `branch` and `head`, and those notes' foreign text."""
    candidates: dict[str, list[tuple[NoteChunk, str]]] = {}
    foreign: list[ForeignText] = []
    for obj in index.commits_for(branch, head):
        chunks = index.chunks[obj]
        after = ""
        for chunk in chunks:
            if chunk.review is not None:
                candidates.setdefault(chunk.review.id, []).append((chunk, obj))
                after = chunk.review.id
            elif chunk.text.strip():
                foreign.append(ForeignText(obj, chunk.text, foreign_why(after)))
    return candidates, foreign


_checked: dict[tuple[str, str], SignatureCheck] = {}
_checked_lock = threading.Lock()


def _check(repo_dir: str | Path, chunk: str, trust: Trust) -> SignatureCheck:
    """`verify_chunk`, kept per (trust, chunk): the same bytes under the same trust check the same."""
    from reviewui.core.notes.signing import split_signed

    if split_signed(chunk)[1] is None:
        return verify_chunk(repo_dir, chunk, trust.signers)  # unsigned: no process, nothing to keep
    key = (trust.fingerprint, hashlib.sha256(chunk.encode("utf-8", "surrogateescape")).hexdigest())
    with _checked_lock:
        known = _checked.get(key)
    if known is not None and trust.fingerprint:
        return known
    check = verify_chunk(repo_dir, chunk, trust.signers)
    with _checked_lock:
        if len(_checked) > 100_000:
            _checked.clear()
        _checked[key] = check
    return check


def _trust_fingerprint(repo_dir: str | Path, signers: Signers | None) -> str:
    """What a signature check depends on besides the chunk: the settings and the files they name."""
    parts: list[str] = [repr(signers)]
    names = ("gpg.ssh.allowedSignersFile", "gpg.ssh.program", "gpg.program", "gpg.openpgp.program",
             "gpg.minTrustLevel")
    values = [config_value(repo_dir, n) for n in names] if signers is None else []
    parts += values
    files = [signers.allowed_file if signers else values[0]]
    home = os.environ.get("GNUPGHOME") or str(Path.home() / ".gnupg")
    files += [str(Path(home) / f) for f in ("pubring.kbx", "pubring.gpg", "trustdb.gpg")]
    for f in files:
        try:
            st = Path(f).expanduser().stat()
            parts.append(f"{f}:{st.st_mtime_ns}:{st.st_size}:{st.st_ino}")
        except (OSError, ValueError):
            parts.append(f"{f}:-")
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()
