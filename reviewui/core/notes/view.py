"""What the notes say about one branch, as the reviewer is shown it: reviews apart from foreign text.

`branch_notes` is the one reader behind `log` (text and JSON) and the
history screen. Each review comes with the check of its signature, whom it
is shown as (trust.py) and how it reached this clone (provenance.py); a
signed review is what its signed bytes say and nothing more. Everything
else in those notes is foreign text, kept apart with the reason it is
foreign: text no review table holds, text after a review's signature (which
no signature covers), or a second copy of a review (same id) that says
something else than the one shown. When copies of one id differ, the one
with a good signature is shown, else the first.

A note over the input cap is never read (its size is asked first): the
reading stops with one line naming it, as every bounded read does. (`notes
pull` never brings one in: it skips it, see sync.py.)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reviewui.core.bounded import limit
from reviewui.core.errors import ReviewError
from reviewui.core.notes import provenance
from reviewui.core.notes.model import NoteChunk, Review, parse_note
from reviewui.core.notes.signing import SignatureCheck, verify_chunk
from reviewui.core.notes.store import snapshot
from reviewui.core.notes.trust import LocalReviewer, local_reviewer, shown_reviewer


@dataclass(frozen=True)
class ShownReview:
    """One review as shown: what it claims, what its signature proves, where it came from."""

    review: Review
    """The review as written (its `reviewer` is what it claims)."""
    check: SignatureCheck
    """The check of its signature."""
    shown_as: str
    """Whom it is shown as: its reviewer, or `unverified (claims to be …)`."""
    provenance: str
    """`recorded here`, `pulled from <remote>`, or "" when this clone does not know."""
    commit: str
    """The commit whose note holds it."""

    def signature_words(self) -> str:
        """The signature and provenance in words, e.g. `signed by bob@x · pulled from origin`."""
        words = self.check.words()
        return f"{words} · {self.provenance}" if self.provenance and self.provenance != provenance.RECORDED else words


@dataclass(frozen=True)
class ForeignText:
    """Text in a note that is not a review anyone signed or wrote as one."""

    commit: str
    """The commit whose note holds it."""
    text: str
    """The text, exactly as stored."""
    why: str
    """Where or why, in words: `after review 1b2c3d4e`, `before any review`, `another copy of review … that differs`."""


@dataclass(frozen=True)
class BranchNotes:
    """The reviews of a branch (oldest first) and the foreign text in their notes."""

    reviews: tuple[ShownReview, ...]
    """Each review once, oldest first."""
    foreign: tuple[ForeignText, ...]
    """Foreign text of the notes that hold the branch's reviews (or the head's note), in note order."""


def branch_notes(repo_dir: str | Path, branch: str, head_sha: str, ref: str) -> BranchNotes:
    """Return the reviews of `branch` (any commit's note, plus any on `head_sha`) and their notes' foreign text.

    Raises ReviewError when a note is over the input cap (it is not read).
    """
    snap = snapshot(repo_dir, ref)
    texts, big = snap.read_all_bounded()
    if big:
        obj, size = min(big.items())
        raise ReviewError(f"note blob on {obj[:12]} is larger than {limit('note'):,} bytes (max-input-bytes); "
                          f"not read ({size:,} bytes)")
    candidates: dict[str, list[tuple[NoteChunk, str]]] = {}
    foreign: list[ForeignText] = []
    for obj, body in sorted(texts.items()):
        chunks = parse_note(body)
        if not any(c.review is not None and (c.review.branch == branch or obj == head_sha) for c in chunks):
            if obj != head_sha:
                continue
        after = ""
        for chunk in chunks:
            if chunk.review is not None:
                candidates.setdefault(chunk.review.id, []).append((chunk, obj))
                after = chunk.review.id
            elif chunk.text.strip():
                foreign.append(ForeignText(obj, chunk.text, _why(after)))
    me: LocalReviewer | None = None
    known = provenance.load(repo_dir) if candidates else {}
    shown: list[ShownReview] = []
    for rid, copies in candidates.items():
        first = copies[0][0].review
        assert first is not None
        if first.branch != branch and not any(obj == head_sha for _, obj in copies):
            continue  # only this branch's reviews are checked: each check may run ssh-keygen or gpg
        checks: dict[str, SignatureCheck] = {}
        for chunk, _ in copies:
            if chunk.text not in checks:
                checks[chunk.text] = verify_chunk(repo_dir, chunk.text)
        pick, obj = next(((c, o) for c, o in copies if checks[c.text].status == "good"), copies[0])
        r = pick.review
        assert r is not None
        for chunk, where in copies:
            if chunk.review != r or checks[chunk.text].status != checks[pick.text].status:
                foreign.append(ForeignText(where, chunk.text, f"another copy of review {rid[:8]} that differs"))
        me = me or local_reviewer(repo_dir)
        came = known.get(provenance.key(r), "")
        check = checks[pick.text]
        shown.append(ShownReview(r, check, shown_reviewer(r, check, me, came), came, obj))
    shown.sort(key=lambda s: s.review.at)
    return BranchNotes(tuple(shown), tuple(foreign))


def _why(after: str) -> str:
    return f"after review {after[:8]}" if after else "before any review"
