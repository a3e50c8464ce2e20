"""Verdicts stored in git notes: record, read, history, log.

A verdict lives with the code, readable with plain git (`git log
--notes=reviewui`), under the notes ref `refs/notes/reviewui` (configurable),
attached to the branch head commit it judged. The note body is TOML written
with tomli-w; each verdict appends one `[[review]]` table.

How a note body is read (and why foreign text survives):
the body is cut into chunks before every line tomllib reads as a `[[review]]`
header, however spelled (layout.py). A chunk that parses as TOML into one
review with an `id` and a known `verdict` is a review; anything else (a
hand-written remark, a non-TOML note, TOML of another tool, text `git notes
append` added after a review) is foreign text. A signed review is read from
the bytes its signature covers and nothing else: whatever follows its
`[review.signed]` table is foreign text of its own, shown apart (view.py).
When an unsigned chunk starts with a good review followed by junk, the junk
(from the line tomllib first complains about) is split off as foreign text.
A header-looking line is a cut even inside a multi-line string: reviewui
never writes one, and a signed review's bytes stay findable however a note
wraps them. Writes never rewrite what is there: a new review is appended
after the existing bytes, separated by a blank line, so earlier reviews and
foreign text are kept byte for byte. A non-TOML note therefore becomes "its text, a blank line, our
`[[review]]` tables"; the note as a whole is then no longer valid TOML, but
every review in it still is, and this module reads it back. Notes of other
commits and other refs are never touched. Reviews are de-duplicated by `id`
when read (first one wins; for display, the copy with a good signature wins
and a differing copy is foreign text), so a union produced by `git notes
merge -s union` reads correctly.

Writes are safe under concurrency: read the notes commit, build the new note
blob, tree and commit with plumbing (never the index), then move the ref with
`git update-ref <ref> <new> <old>` (compare-and-swap) and retry with jittered
backoff when another writer won the race. Nothing else in the repo changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewui.core.config import DEFAULT_NOTES_REF
from reviewui.core.errors import ReviewError
from reviewui.core.git import rev_parse
from reviewui.core.notes.patchid import patch_id  # noqa: F401 - re-exported
from reviewui.core.notes.body import append_text, parse_note, reviews_in  # noqa: F401 - re-exported
from reviewui.core.notes.model import (  # noqa: F401 - re-exported: notes is the public face
    EPOCH,
    Review,
    TOOL,
    VERDICTS,
    git_identity,
)
from reviewui.core.notes.records import (  # noqa: F401 - re-exported
    BiteRecord,
    CommentRecord,
    FindingRecord,
    GuardRecord,
    ProbeRecord,
)
from reviewui.core.safe_text import visible
from reviewui.core.notes.signing import sign_payload, signing_setup
from reviewui.core.notes import provenance
from reviewui.core.notes.relation import BranchVerdicts, branch_verdicts, currency
from reviewui.core.notes.store import (  # noqa: F401
    NotesEdit,
    NotesSnapshot,
    check_ref,
    read_blobs,
    snapshot,
    transact,
)


# --- recording and reading ---------------------------------------------------


def record_review(repo_dir: str | Path, review: Review, ref: str = DEFAULT_NOTES_REF) -> None:
    """Append `review` to the note on its head commit under `ref` (compare-and-swap, retried).

    Raises ReviewError when the head is not a commit of the repo or the ref
    cannot be updated.
    """
    head = rev_parse(repo_dir, review.head)
    if head is None:
        raise ReviewError(f"no such commit: {review.head}")
    piece = review.to_toml()
    setup = signing_setup(repo_dir)
    if setup is not None:
        piece += sign_payload(setup, piece)  # signed before any write: a failure records nothing

    def change(snap: NotesSnapshot) -> NotesEdit:
        body = snap.read(head) or ""
        message = f"reviewui: {review.verdict} {review.branch} {head[:12]}"
        return NotesEdit({head: append_text(body, piece)}, message)

    transact(repo_dir, ref, change)
    provenance.remember(repo_dir, reviews_in(piece), provenance.RECORDED)


def reviews_on(repo_dir: str | Path, commit: str, ref: str = DEFAULT_NOTES_REF) -> list[Review]:
    """Return the reviews in the note on `commit` under `ref`, oldest first.

    Returns [] when there is no note. Raises ReviewError when `commit` names no commit.
    """
    sha = rev_parse(repo_dir, commit)
    if sha is None:
        raise ReviewError(f"no such commit: {commit}")
    body = snapshot(repo_dir, check_ref(repo_dir, ref)).read(sha)
    return reviews_in(body) if body else []


def read_note(repo_dir: str | Path, commit: str, ref: str = DEFAULT_NOTES_REF) -> str | None:
    """Return the raw text of the note on `commit` under `ref`, or None when there is none."""
    sha = rev_parse(repo_dir, commit)
    return snapshot(repo_dir, check_ref(repo_dir, ref)).read(sha) if sha else None


def branch_history(
    repo_dir: str | Path, branch: str, head: str, ref: str = DEFAULT_NOTES_REF
) -> list[Review]:
    """Return every review of `branch` (any commit's note), plus any review on `head`, oldest first.

    Reviews are de-duplicated by id (a note copied on rebase holds the same ids).
    """
    head_sha = rev_parse(repo_dir, head) or head
    snap = snapshot(repo_dir, check_ref(repo_dir, ref))
    found: dict[str, Review] = {}
    for obj, body in sorted(snap.read_all().items()):
        for r in reviews_in(body):
            if (r.branch == branch or obj == head_sha) and r.id not in found:
                found[r.id] = r
    return sorted(found.values(), key=lambda r: r.at)


def read_branch_notes(repo_dir: str | Path, branch: str, base: str, head: str,
                      ref: str = DEFAULT_NOTES_REF) -> BranchVerdicts:
    """The reviews of `branch` (base..head now) weighed by the verdict relation, and their notes' foreign text."""
    return branch_verdicts(repo_dir, branch, base, head, check_ref(repo_dir, ref))


# --- the log ------------------------------------------------------------------


RELATION_WORDS = {"this-head": "this-head", "same-patch": "same-patch", "outdated": "different-patch"}
"""The relation's currency in the words of `log --format json`'s `relation`."""


def review_relation(review: Review, head: str, current_patch_id: str) -> str:
    """Return how `review` relates to the branch now (the relation's currency, in `log`'s words).

    `this-head` when it judged `head` itself; `same-patch` when it judged an
    earlier head whose verbatim patch id equals the current one (a rebase that
    changed no byte of the patch); `different-patch` otherwise (the code
    changed since, whitespace included).
    """
    return RELATION_WORDS[currency(review, head, current_patch_id)]


def log_json(
    repo_dir: str | Path, branch: str, base: str, head: str, ref: str = DEFAULT_NOTES_REF
) -> dict[str, Any]:
    """Return the `reviewui log --format json` document for `branch`.

    `{"reviews": [{"id", "verdict", "reason", "reviewer", "shown_as", "signature",
    "provenance", "at", "branch", "base", "head", "patch_id", "current",
    "relation", "counts", "on_branch", "why_not", "bites", "probes", "comments",
    "findings"}], "foreign": [{"commit", "why", "text"}]}`, reviews
    oldest first. `current` is true for a review that stands now: it counts
    (verdict relation), it is its reviewer's latest that counts, and it judged
    this patch (this head, or an earlier one with base..head's verbatim patch
    id). `signature` is `{"status": good|unsigned|bad, "state":
    trusted|untrusted|bad|unsigned, "signer", "key", "detail"}`; `shown_as` is
    whom the review is shown as (a claim to be the local reviewer without their
    good signature is marked unverified); `provenance` is `recorded here`,
    `pulled from <remote>` or "" (unknown). A signed review says only what its
    signed bytes say; `foreign` is the text of those notes that is no review
    (or no part of one). Raises ReviewError for an unknown base or head, or a
    note over the input cap.
    """
    notes = read_branch_notes(repo_dir, branch, base, head, ref)
    standing = {w.review.id for w in notes.standing if w.current}
    return {
        "reviews": [
            {
                "id": r.id,
                "verdict": r.verdict,
                "reason": r.reason,
                "reviewer": r.reviewer,
                "shown_as": w.shown_as,
                "signature": {"status": w.check.status, "state": w.signature, "signer": w.check.signer,
                              "key": w.check.key, "detail": w.check.detail},
                "provenance": w.provenance,
                "at": r.at_iso(),
                "branch": r.branch,
                "base": r.base,
                "head": r.head,
                "patch_id": r.patch_id,
                "current": r.id in standing,
                "relation": RELATION_WORDS[w.currency],
                "counts": w.counts,
                "on_branch": w.on_branch,
                "why_not": w.why_not,
                "bites": [{"file": b.file, "header": b.header, "verdict": b.verdict,
                           "failing_tests": list(b.failing_tests)} for b in r.bites],
                "probes": [{"name": p.name, "code": p.code, "branch": p.branch, "base": p.base} for p in r.probes],
                "comments": [{"file": c.file, "header": c.header, "line": c.line, "text": c.text}
                             for c in r.comments],
                "findings": [{"kind": f.kind, "message": f.message} for f in r.findings],
            }
            for w in notes.reviews
            for r in (w.review,)
        ],
        "foreign": [{"commit": f.commit, "why": f.why, "text": f.text} for f in notes.foreign],
    }


LOG_WORDS = {"this-head": "this head", "same-patch": "same patch, earlier head", "outdated": "OUTDATED by rework"}
"""How `log` text names a review's currency."""


def render_log_text(
    repo_dir: str | Path, branch: str, base: str, head: str, ref: str = DEFAULT_NOTES_REF
) -> str:
    """Return the `reviewui log` text for `branch`: one block per review, oldest first, then foreign text.

    A review's row is the only line that starts at the left edge; its reason
    is indented and marked `│` on every line, foreign text `!`, so nothing a
    note holds can draw a line that looks like a review. Control characters
    are shown escaped, never sent to the terminal. A review that does not
    count (verdict relation) says why. Raises ReviewError for an unknown base or head.
    """
    notes = read_branch_notes(repo_dir, branch, base, head, ref)
    lines = [] if notes.reviews else [f"no reviews of {_safe(branch)} under {ref}"]
    for w in notes.reviews:
        r = w.review
        came = f"  ({_safe(w.provenance)})" if w.provenance and w.provenance != provenance.RECORDED else ""
        counts = "" if w.counts else f"  does not count: {_safe(w.why_not)}"
        lines.append(f"{r.at_iso()}  {r.verdict:7}  {_safe(w.shown_as)}  {_safe(r.head[:12])}  ({LOG_WORDS[w.currency]})"
                     f"  [{_safe(w.check.words())}]{came}{counts}")
        lines.extend(marked_lines(r.reason, REASON_MARK))
    if notes.foreign:
        lines.append("foreign text in these notes (no signature covers it; it is not a review):")
        for f in notes.foreign:
            lines.append(f"  on {_safe(f.commit[:12])}, {_safe(f.why)}:")
            lines.extend(marked_lines(f.text, FOREIGN_MARK))
    return "\n".join(lines) + "\n"


REASON_MARK = "    \u2502 "
"""What starts every line of a review's reason in text output: indented, and marked `│`."""
FOREIGN_MARK = "    ! "
"""What starts every line of foreign text in text output."""
_WIDTH = 100


def marked_lines(text: str, mark: str, width: int = _WIDTH) -> list[str]:
    """`text` as display lines, each starting with `mark`, control characters escaped, wrapped at `width`.

    Wrapping here (not in the terminal) keeps a long line from wrapping to the
    left edge, where it could pass for a review's row.
    """
    import textwrap

    out: list[str] = []
    for part in text.splitlines() or [""]:
        safe = _safe(part).expandtabs(4)
        if not safe.strip():
            continue
        out.extend(textwrap.wrap(safe, width=max(20, width - len(mark)), initial_indent=mark, subsequent_indent=mark,
                                 drop_whitespace=True, replace_whitespace=False, break_on_hyphens=False))
    return out


def _safe(text: str) -> str:
    return visible(text)
