"""Share verdict notes with a remote: pull (fetch + merge by review id) and push.

`pull_notes` fetches the remote's notes ref into
`refs/notes/remotes/<remote>/<name>` and merges it into the local ref. The
merge is a union by review `id`: for each annotated commit, the local note is
kept byte for byte and whatever the remote note has that it lacks is
appended (reviews whose id is new, foreign text not already present as a
block of lines). Merging is therefore order-independent in content and
idempotent: pulling twice adds nothing the second time. When the union is
the remote's notes already hold everything the local ref has and the local
ref is an ancestor, the ref is fast-forwarded instead of making a merge
commit, so two reviewers who pull from each other settle on one commit.
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
from reviewui.core.notes.model import NoteChunk, append_text, parse_note, reviews_in
from reviewui.core.notes.signing import verify_chunk
from reviewui.core.notes.store import NotesEdit, NotesSnapshot, check_ref, read_blobs, snapshot, transact


def remote_notes_ref(remote: str, ref: str = DEFAULT_NOTES_REF) -> str:
    """Return where `remote`'s copy of `ref` is kept, e.g. `refs/notes/remotes/origin/reviewui`."""
    short = ref.removeprefix("refs/notes/") if ref.startswith("refs/notes/") else ref.removeprefix("refs/")
    return f"refs/notes/remotes/{remote}/{short}"


def merge_bodies(local: str, remote: str, added_chunks: list[str] | None = None) -> tuple[str, int]:
    """Return `local` with what `remote` has and it lacks appended, and how many reviews were added.

    Reviews are matched by id; foreign text is added unless it already
    appears in `local` as a block of whole lines. `local` is a prefix of the
    result. The text of each review added is appended to `added_chunks` when given.
    """
    ids = {r.id for r in reviews_in(local)}
    out, added = local, 0
    for chunk in parse_note(remote):
        if chunk.review is not None:
            if chunk.review.id in ids:
                continue
            ids.add(chunk.review.id)
            added += 1
            if added_chunks is not None:
                added_chunks.append(chunk.text)
            out = append_text(out, chunk.text)
        elif chunk.text.strip() and f"\n{chunk.text.strip()}\n" not in f"\n{out}\n":
            out = append_text(out, chunk.text)
    return out, added


@dataclass(frozen=True)
class PullReport:
    """What a pull brought in."""

    added: int
    """Reviews new to the local notes."""
    unsigned: int = 0
    """Of those, reviews with no signature."""
    bad: int = 0
    """Of those, reviews whose signature does not verify against git's trust settings."""

    def words(self, remote: str) -> str:
        """One line for the terminal, e.g. `pulled 2 reviews from origin (1 unsigned, 1 bad signature)`."""
        text = f"pulled {self.added} review{'s' if self.added != 1 else ''} from {remote}"
        flags = [f"{self.unsigned} unsigned"] * bool(self.unsigned)
        flags += [f"{self.bad} bad signature{'s' if self.bad != 1 else ''}"] * bool(self.bad)
        return text + (f" ({', '.join(flags)})" if flags else "")


def pull_notes(repo_dir: str | Path, remote: str = "origin", ref: str = DEFAULT_NOTES_REF) -> int:
    """Fetch `remote`'s notes ref and merge it into the local one; return the number of reviews added.

    Returns 0 when the remote has no such ref. Raises ReviewError when
    `remote` is not a configured remote, the fetch fails, or the local ref
    cannot be updated.
    """
    return pull_notes_report(repo_dir, remote, ref).added


def pull_notes_report(repo_dir: str | Path, remote: str = "origin", ref: str = DEFAULT_NOTES_REF) -> PullReport:
    """`pull_notes`, also counting the unsigned and badly signed reviews it brought in."""
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
    counted: list[int] = [0]
    brought: list[str] = []

    def change(ours: NotesSnapshot) -> NotesEdit | None:
        brought.clear()  # a retried transaction starts over
        if ours.commit is not None and _is_ancestor(repo_dir, theirs_commit, ours.commit):
            counted[0] = 0
            return None
        bodies, counted[0], covers_ours = _union(ours, theirs, brought)
        if ours.commit is None or (covers_ours and _is_ancestor(repo_dir, ours.commit, theirs_commit)):
            return NotesEdit({}, f"reviewui: fast-forward notes from {remote}", move_to=theirs_commit)
        # Even with nothing new to add, record the merge: otherwise the local
        # ref never contains the remote's history and can never be pushed.
        return NotesEdit(bodies, f"reviewui: merge notes from {remote}", extra_parents=(theirs_commit,))

    transact(repo_dir, ref, change)
    checks = [verify_chunk(repo_dir, text) for text in brought]
    return PullReport(counted[0], sum(c.status == "unsigned" for c in checks), sum(c.status == "bad" for c in checks))


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


def _union(
    ours: NotesSnapshot, theirs: NotesSnapshot, brought: list[str] | None = None
) -> tuple[dict[str, str], int, bool]:
    """Return (new bodies for our notes, reviews added, whether theirs already holds all of ours)."""
    differing = sorted(o for o in set(theirs.notes) | set(ours.notes) if ours.blob(o) != theirs.blob(o))
    wanted = {sha for o in differing for sha in (ours.blob(o), theirs.blob(o)) if sha}
    blobs = read_blobs(ours.repo_dir, sorted(wanted))
    bodies: dict[str, str] = {}
    added = 0
    covers_ours = True
    for obj in differing:
        mine, other = ours.blob(obj), theirs.blob(obj)
        if other is None:
            covers_ours = False
            continue
        remote_text = blobs[other].decode("utf-8", "surrogateescape")
        if mine is None:
            bodies[obj], n = remote_text, len(reviews_in(remote_text))
            if brought is not None:
                brought.extend(c.text for c in _first_of_each_id(remote_text))
        else:
            local_text = blobs[mine].decode("utf-8", "surrogateescape")
            covers_ours = covers_ours and merge_bodies(remote_text, local_text)[0] == remote_text
            merged, n = merge_bodies(local_text, remote_text, brought)
            if merged == local_text:
                continue
            bodies[obj] = merged
        added += n
    return bodies, added, covers_ours


def _first_of_each_id(body: str) -> list[NoteChunk]:
    seen: set[str] = set()
    out = []
    for chunk in parse_note(body):
        if chunk.review is not None and chunk.review.id not in seen:
            seen.add(chunk.review.id)
            out.append(chunk)
    return out


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
