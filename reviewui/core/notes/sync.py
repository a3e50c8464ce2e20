"""Share verdict notes with a remote: pull (fetch + merge by review id) and push.

`pull_notes` fetches the remote's notes ref into
`refs/notes/remotes/<remote>/<name>` and merges it into the local ref. The
merge is a union by review `id`: for each annotated commit, the local note is
kept byte for byte and whatever the remote note has that it lacks is
appended (reviews whose id is new, foreign text not already present as a
block of lines); a remote copy of a known review that says something else
is left out and counted. Merging is therefore order-independent in content
and idempotent: pulling twice adds nothing the second time. When the
remote's notes already hold everything the local ref has, byte for byte,
nothing would be left out, and the local ref is an ancestor, the ref is
fast-forwarded instead of making a merge commit, so two reviewers who pull
from each other settle on one commit.

What a pull changed is counted from what it wrote: reviews added, pieces
of foreign text added (text after a review's signature is foreign: see
layout.py), differing copies left out, notes skipped. A note over the input
cap is never read (its size is asked first) and never lands locally: it is
skipped with a warning and the rest of the pull goes on.
Otherwise a merge commit (parents: local, remote) is made even when it adds
nothing, so the local ref always contains the remote's history and a later
push is a fast-forward.

The fetch uses `--refmap=` so a team's `remote.<name>.fetch` lines can never
overwrite the local notes ref behind the merge's back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reviewui.core.config import DEFAULT_NOTES_REF
from reviewui.core.errors import ReviewError
from reviewui.core.git import rev_parse, run_git
from reviewui.core.notes import provenance
from reviewui.core.notes.body import parse_note
from reviewui.core.notes.signing import verify_chunk
from reviewui.core.notes.store import (
    NotesEdit,
    NotesSnapshot,
    blob_sizes,
    check_ref,
    read_blobs,
    snapshot,
    transact,
)


def remote_notes_ref(remote: str, ref: str = DEFAULT_NOTES_REF) -> str:
    """Return where `remote`'s copy of `ref` is kept, e.g. `refs/notes/remotes/origin/reviewui`."""
    short = ref.removeprefix("refs/notes/") if ref.startswith("refs/notes/") else ref.removeprefix("refs/")
    return f"refs/notes/remotes/{remote}/{short}"


@dataclass(frozen=True)
class NoteMerge:
    """What merging one remote note into a local one did."""

    body: str
    """The merged body (`local` is a prefix of it)."""
    reviews: tuple[str, ...] = ()
    """The chunk text of each review added."""
    foreign: int = 0
    """Pieces of foreign text added."""
    differing: int = 0
    """Remote copies of a review the local note has (same id) that say something else: not taken."""


def merge_note(local: str, remote: str) -> NoteMerge:
    """Return `local` with what `remote` has and it lacks appended, and what that added.

    Reviews are matched by id; a remote copy of a known id with other bytes is
    left out (the local copy stands) and counted. Foreign text is added unless
    it already appears in `local` as a block of whole lines. Linear in the
    size of both notes, however many pieces a hostile note is cut into.
    """
    texts: dict[str, set[str]] = {}
    for chunk in parse_note(local):
        if chunk.review is not None:
            texts.setdefault(chunk.review.id, set()).add(chunk.text.rstrip())
    out = _Appended(local)
    added: list[str] = []
    foreign = differing = 0
    for chunk in parse_note(remote):
        if chunk.review is not None:
            known = texts.get(chunk.review.id)
            if known is not None:
                differing += chunk.text.rstrip() not in known
                continue
            texts[chunk.review.id] = {chunk.text.rstrip()}
            added.append(chunk.text)
            out.append(chunk.text)
        elif chunk.text.strip() and not out.has_block(chunk.text.strip()):
            foreign += 1
            out.append(chunk.text)
    return NoteMerge(out.text(), tuple(added), foreign, differing)


class _Appended:
    """A note body being appended to (as `append_text` does), with its lines indexed.

    `has_block(t)` is `f"\\n{t}\\n" in f"\\n{body}\\n"` without copying or
    scanning the body: the block's rarest line is looked up, and only where
    it occurs are the neighbouring lines compared.
    """

    def __init__(self, body: str) -> None:
        self.parts = [body]
        self.size = len(body)
        self.ends_nl = body.endswith("\n")
        self.lines: list[str] = [""]
        self.at: dict[str, list[int]] = {"": [0]}
        self._extend(body)

    def append(self, piece: str) -> None:
        """Add `piece` after a blank line (the whole piece when the body is empty)."""
        glue = "" if self.size == 0 else ("" if self.ends_nl else "\n") + "\n"
        for text in (glue, piece):
            if text:
                self.parts.append(text)
                self.size += len(text)
                self.ends_nl = text.endswith("\n")
                self._extend(text)

    def has_block(self, block: str) -> bool:
        """True when `block` is, line for line, a run of whole lines of the body."""
        want = block.split("\n")
        anchor = min(range(len(want)), key=lambda i: len(self.at.get(want[i], ())))
        for pos in self.at.get(want[anchor], ()):
            start = pos - anchor
            if start >= 0 and self.lines[start : start + len(want)] == want:
                return True
        return False

    def text(self) -> str:
        """The body with everything appended."""
        return "".join(self.parts)

    def _extend(self, text: str) -> None:
        # `lines` is always body.split("\\n"): the new text's first part completes the last line.
        first, *rest = text.split("\n")
        if first:
            last = len(self.lines) - 1
            entries = self.at[self.lines[last]]
            assert entries[-1] == last  # indices go in ascending: the last line is last in its list
            entries.pop()
            self.lines[last] += first
            self.at.setdefault(self.lines[last], []).append(last)
        for line in rest:
            self.at.setdefault(line, []).append(len(self.lines))
            self.lines.append(line)


def merge_bodies(local: str, remote: str, added_chunks: list[str] | None = None) -> tuple[str, int]:
    """Return `local` with what `remote` has and it lacks appended, and how many reviews were added.

    See `merge_note`. The text of each review added is appended to `added_chunks` when given.
    """
    merged = merge_note(local, remote)
    if added_chunks is not None:
        added_chunks.extend(merged.reviews)
    return merged.body, len(merged.reviews)


@dataclass(frozen=True)
class PullReport:
    """What a pull brought in (counted from what it changed, not from review ids alone)."""

    added: int
    """Reviews new to the local notes."""
    unsigned: int = 0
    """Of those, reviews with no signature."""
    bad: int = 0
    """Of those, reviews whose signature does not verify against git's trust settings."""
    foreign: int = 0
    """Pieces of foreign text (no review, or after a review's signature) added to local notes."""
    differing: int = 0
    """Remote copies of local reviews (same id) that say something else: the local copy was kept."""
    oversized: tuple[tuple[str, int], ...] = ()
    """(annotated commit, size) of each note skipped because it is over the input cap."""

    def words(self, remote: str) -> str:
        """One line for the terminal, e.g. `pulled 2 reviews from origin (1 unsigned, 1 bad signature)`."""
        text = f"pulled {self.added} review{'s' if self.added != 1 else ''} from {remote}"
        flags = [f"{self.unsigned} unsigned"] * bool(self.unsigned)
        flags += [f"{self.bad} bad signature{'s' if self.bad != 1 else ''}"] * bool(self.bad)
        text += f" ({', '.join(flags)})" if flags else ""
        if self.foreign:
            text += f"; {self.foreign} piece{'s' if self.foreign != 1 else ''} of foreign text (not a review, signed by no one)"
        if self.differing:
            text += (f"; kept your copy of {self.differing} review{'s' if self.differing != 1 else ''}"
                     f" that {'differ' if self.differing != 1 else 'differs'} on {remote}")
        if self.oversized:
            text += f"; skipped {len(self.oversized)} oversized note{'s' if len(self.oversized) != 1 else ''}"
        return text

    def warnings(self) -> list[str]:
        """One line per note skipped for its size."""
        from reviewui.core.bounded import limit

        return [f"warning: skipped the note on {obj[:12]}: {size:,} bytes is over the {limit('note'):,}-byte cap"
                f" (max-input-bytes)" for obj, size in self.oversized]


def pull_notes(repo_dir: str | Path, remote: str = "origin", ref: str = DEFAULT_NOTES_REF) -> int:
    """Fetch `remote`'s notes ref and merge it into the local one; return the number of reviews added.

    Returns 0 when the remote has no such ref. Raises ReviewError when
    `remote` is not a configured remote, the fetch fails, or the local ref
    cannot be updated.
    """
    return pull_notes_report(repo_dir, remote, ref).added


def pull_notes_report(repo_dir: str | Path, remote: str = "origin", ref: str = DEFAULT_NOTES_REF) -> PullReport:
    """`pull_notes`, also counting foreign text, differing copies, oversized notes, unsigned and bad reviews.

    A note over the input cap is never read (its size is asked first): it is
    skipped and the rest of the pull goes on. Reviews brought in are
    remembered as pulled from `remote` (provenance.py).
    """
    check_ref(repo_dir, ref)
    tracking = check_ref(repo_dir, _remote_checked(repo_dir, remote, ref))
    if not run_git(repo_dir, "ls-remote", "--refs", remote, ref).strip():
        return PullReport(0)
    run_git(
        repo_dir,
        "fetch",
        "--no-tags",
        "--no-write-fetch-head",
        "--no-auto-maintenance",
        "--no-recurse-submodules",
        "--refmap=",
        remote,
        f"+{ref}:{tracking}",
    )
    theirs_commit = rev_parse(repo_dir, tracking)
    if theirs_commit is None:
        raise ReviewError(f"fetched {ref} from {remote} but {tracking} is not a commit")
    theirs = snapshot(repo_dir, theirs_commit)
    result: list[_Union] = []

    def change(ours: NotesSnapshot) -> NotesEdit | None:
        result.clear()  # a retried transaction starts over
        if ours.commit is not None and _is_ancestor(repo_dir, theirs_commit, ours.commit):
            return None
        union = _union(ours, theirs)
        result.append(union)
        takes_all = union.covers_ours and not union.oversized
        if takes_all and (ours.commit is None or _is_ancestor(repo_dir, ours.commit, theirs_commit)):
            return NotesEdit({}, f"reviewui: fast-forward notes from {remote}", move_to=theirs_commit)
        # Even with nothing new to add, record the merge: otherwise the local
        # ref never contains the remote's history and can never be pushed.
        return NotesEdit(union.bodies, f"reviewui: merge notes from {remote}", extra_parents=(theirs_commit,))

    transact(repo_dir, ref, change)
    if not result:
        return PullReport(0)
    u = result[0]
    provenance.remember(repo_dir, [c.review for text in u.brought for c in parse_note(text) if c.review is not None],
                        provenance.pulled_from(remote))
    checks = [verify_chunk(repo_dir, text) for text in u.brought]
    return PullReport(len(u.brought), sum(c.status == "unsigned" for c in checks), sum(c.status == "bad" for c in checks),
                      u.foreign, u.differing, u.oversized)


def push_notes(repo_dir: str | Path, remote: str = "origin", ref: str = DEFAULT_NOTES_REF) -> None:
    """Push the local notes ref to the same ref on `remote`.

    Raises ReviewError when there is nothing to push, when the remote has
    reviews the local ref lacks (pull first), or when the push fails.
    """
    check_ref(repo_dir, ref)
    tracking = check_ref(repo_dir, _remote_checked(repo_dir, remote, ref))
    ours = rev_parse(repo_dir, ref)
    if ours is None:
        raise ReviewError(f"no reviews to push: {ref} does not exist")
    out = run_git(repo_dir, "push", "--porcelain", remote, f"{ref}:{ref}", check=False)
    status = [line for line in out.decode("utf-8", "replace").splitlines() if f"\t{ref}:{ref}\t" in line]
    if not status:
        # The push failed before any ref was tried: run it again to surface git's own message.
        run_git(repo_dir, "push", remote, f"{ref}:{ref}")
        raise ReviewError(f"git push: could not push {ref} to {remote}")
    if status[0].startswith("!"):
        raise ReviewError(
            f"{remote} has reviews you do not have: run `reviewui notes pull {remote}` first, then push"
        )
    run_git(repo_dir, "update-ref", "-m", f"reviewui: pushed to {remote}", tracking, ours)


@dataclass(frozen=True)
class _Union:
    bodies: dict[str, str]
    """New bodies for our notes."""
    brought: list[str]
    """The chunk text of every review added."""
    foreign: int
    differing: int
    oversized: tuple[tuple[str, int], ...]
    covers_ours: bool
    """Whether theirs already holds all of ours, byte for byte (so taking theirs loses nothing)."""


def _union(ours: NotesSnapshot, theirs: NotesSnapshot) -> _Union:
    """Merge every note that differs between `ours` and `theirs` (notes over the input cap skipped, unread)."""
    from reviewui.core.bounded import limit

    differing_notes = sorted(o for o in set(theirs.notes) | set(ours.notes) if ours.blob(o) != theirs.blob(o))
    wanted = {sha for o in differing_notes for sha in (ours.blob(o), theirs.blob(o)) if sha}
    sizes = blob_sizes(ours.repo_dir, sorted(wanted))
    cap = limit("note")
    oversized = tuple((o, max(sizes.get(sha, 0) for sha in (ours.blob(o), theirs.blob(o)) if sha))
                      for o in differing_notes
                      if any(sizes.get(sha, 0) > cap for sha in (ours.blob(o), theirs.blob(o)) if sha))
    skipped = {o for o, _ in oversized}
    blobs = read_blobs(ours.repo_dir, sorted({sha for o in differing_notes if o not in skipped
                                              for sha in (ours.blob(o), theirs.blob(o)) if sha}))
    bodies: dict[str, str] = {}
    brought: list[str] = []
    foreign = differing = 0
    covers_ours = True
    for obj in differing_notes:
        mine, other = ours.blob(obj), theirs.blob(obj)
        if obj in skipped:
            continue
        if other is None:
            covers_ours = False
            continue
        remote_text = blobs[other].decode("utf-8", "surrogateescape")
        if mine is None:
            merged = merge_note("", remote_text)
            # A fresh note is taken whole: extra copies of one id come along, and are foreign text to a reader.
            extra = sum(1 for c in parse_note(remote_text) if c.review is not None) - len(merged.reviews)
            bodies[obj] = remote_text
            brought.extend(merged.reviews)
            foreign += merged.foreign + extra
            continue
        local_text = blobs[mine].decode("utf-8", "surrogateescape")
        back = merge_note(remote_text, local_text)
        merged = merge_note(local_text, remote_text)
        covers_ours = covers_ours and not (back.reviews or back.foreign or back.differing or merged.differing)
        brought.extend(merged.reviews)
        foreign += merged.foreign
        differing += merged.differing
        if merged.body != local_text:
            bodies[obj] = merged.body
    return _Union(bodies, brought, foreign, differing, oversized, covers_ours)


def _is_ancestor(repo_dir: str | Path, older: str, newer: str) -> bool:
    try:
        run_git(repo_dir, "merge-base", "--is-ancestor", older, newer)
    except ReviewError:
        return False
    return True


def _remote_checked(repo_dir: str | Path, remote: str, ref: str) -> str:
    try:
        run_git(repo_dir, "remote", "get-url", "--", remote)
    except ReviewError as e:
        raise ReviewError(f"no such remote: {remote!r} (see `git remote -v`)") from e
    return remote_notes_ref(remote, ref)
