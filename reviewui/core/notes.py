"""Verdicts stored in git notes: record, read, history, log.

A verdict lives with the code, readable with plain git (`git log
--notes=reviewui`), under the notes ref `refs/notes/reviewui` (configurable),
attached to the branch head commit it judged. The note body is TOML written
with tomli-w; each verdict appends one `[[review]]` table.

How a note body is read (and why foreign text survives):
the body is cut into chunks at every line that is exactly `[[review]]`. A
chunk that parses as TOML into one review with an `id` and a known `verdict`
is a review; anything else (a hand-written remark, a non-TOML note, TOML of
another tool, text `git notes append` added after a review) is foreign text.
When a chunk starts with a good review followed by junk, the junk (from the
line tomllib first complains about) is split off as foreign text. Writes never
rewrite what is there: a new review is appended after the existing bytes,
separated by a blank line, so earlier reviews and foreign text are kept
byte for byte. A non-TOML note therefore becomes "its text, a blank line, our
`[[review]]` tables"; the note as a whole is then no longer valid TOML, but
every review in it still is, and this module reads it back. Notes of other
commits and other refs are never touched. Reviews are de-duplicated by `id`
when read (first one wins), so a union produced by `git notes merge -s union`
reads correctly.

Writes are safe under concurrency: read the notes commit, build the new note
blob, tree and commit with plumbing (never the index), then move the ref with
`git update-ref <ref> <new> <old>` (compare-and-swap) and retry with jittered
backoff when another writer won the race. Nothing else in the repo changes.
"""

from __future__ import annotations

import random
import re
import time
import tomllib
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import tomli_w

from reviewui import __version__
from reviewui.core.config import DEFAULT_NOTES_REF
from reviewui.core.errors import ReviewError
from reviewui.core.git import rev_parse, run_git
from reviewui.core.patchid import patch_id

VERDICTS: tuple[str, ...] = ("approve", "reject")
TOOL = f"reviewui {__version__}"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_HEX = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_AT_LINE = re.compile(r"^at = (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\+00:00$", re.M)


@dataclass(frozen=True)
class BiteRecord:
    """The bite check of one hunk, as shown at verdict time."""

    file: str
    """Path of the file the hunk is in."""
    header: str
    """The hunk header, e.g. `@@ -4,6 +4,8 @@`."""
    verdict: str
    """The bite verdict for the hunk (the bite module's word)."""
    failing_tests: tuple[str, ...] = ()
    """Tests that failed with the hunk reverted."""


@dataclass(frozen=True)
class ProbeRecord:
    """A probe the reviewer kept, with its last outcomes."""

    name: str
    """The probe's name."""
    code: str
    """The probe's source code."""
    branch: str = ""
    """Outcome on the branch head (e.g. `pass`, `fail`); empty if not run."""
    base: str = ""
    """Outcome on the base; empty if not run."""


@dataclass(frozen=True)
class CommentRecord:
    """A reviewer's comment on a hunk or one of its lines."""

    file: str
    """Path of the file commented on."""
    header: str
    """Header of the hunk commented on."""
    line: int | None
    """New-side line number, or None for a comment on the whole hunk."""
    text: str
    """The comment."""


@dataclass(frozen=True)
class FindingRecord:
    """A finding shown to the reviewer at verdict time."""

    kind: str
    """The finding kind (a contract word of the findings module)."""
    message: str
    """The finding's one-line message."""


@dataclass(frozen=True)
class Review:
    """One recorded verdict: a `[[review]]` table in a note."""

    id: str
    """A uuid4; merges de-duplicate by it."""
    verdict: str
    """`approve` or `reject`."""
    reason: str
    """Why; required for reject."""
    reviewer: str
    """`Name <email>` from git config."""
    at: datetime
    """When, timezone-aware UTC."""
    tool: str
    """The tool and version that wrote it."""
    branch: str
    """The branch name reviewed."""
    base: str
    """SHA of the base (merge-base) the diff was taken from."""
    head: str
    """SHA of the head commit judged (the note is attached to it)."""
    tree: str
    """SHA of the head's tree."""
    patch_id: str
    """`git patch-id --stable` of base..head ("" for an empty diff)."""
    bites: tuple[BiteRecord, ...] = ()
    """Bite results at verdict time."""
    probes: tuple[ProbeRecord, ...] = ()
    """Kept probes at verdict time."""
    comments: tuple[CommentRecord, ...] = ()
    """Hunk comments at verdict time."""
    findings: tuple[FindingRecord, ...] = ()
    """Findings shown at verdict time."""

    @classmethod
    def new(
        cls,
        verdict: str,
        reason: str,
        *,
        repo_dir: str | Path,
        branch: str,
        base: str,
        head: str,
        bites: tuple[BiteRecord, ...] | list[BiteRecord] = (),
        probes: tuple[ProbeRecord, ...] | list[ProbeRecord] = (),
        comments: tuple[CommentRecord, ...] | list[CommentRecord] = (),
        findings: tuple[FindingRecord, ...] | list[FindingRecord] = (),
    ) -> "Review":
        """Return a new review of base..head, stamped with id, reviewer, time, tree, patch-id.

        Raises ReviewError for an unknown verdict, a reject without a reason,
        a base or head that names no commit, or no git identity configured.
        """
        if verdict not in VERDICTS:
            raise ReviewError(f"verdict must be approve or reject, not {verdict!r}")
        reason = (reason or "").strip()
        if verdict == "reject" and not reason:
            raise ReviewError("a reject needs a reason")
        head_sha = rev_parse(repo_dir, head)
        base_sha = rev_parse(repo_dir, base)
        if head_sha is None or base_sha is None:
            raise ReviewError(f"no such commit: {head if head_sha is None else base}")
        return cls(
            id=str(uuid.uuid4()),
            verdict=verdict,
            reason=reason,
            reviewer=git_identity(repo_dir),
            at=datetime.now(timezone.utc).replace(microsecond=0),
            tool=TOOL,
            branch=branch,
            base=base_sha,
            head=head_sha,
            tree=run_git(repo_dir, "rev-parse", f"{head_sha}^{{tree}}").decode().strip(),
            patch_id=patch_id(repo_dir, base_sha, head_sha),
            bites=tuple(bites),
            probes=tuple(probes),
            comments=tuple(comments),
            findings=tuple(findings),
        )

    @classmethod
    def from_mapping(cls, data: Any) -> "Review | None":
        """Return the review a parsed `[[review]]` table describes, or None when it is not one."""
        if not isinstance(data, dict):
            return None
        rid, verdict = data.get("id"), data.get("verdict")
        if not isinstance(rid, str) or not rid.strip() or verdict not in VERDICTS:
            return None
        return cls(
            id=rid,
            verdict=verdict,
            reason=_s(data, "reason"),
            reviewer=_s(data, "reviewer"),
            at=_when(data.get("at")),
            tool=_s(data, "tool"),
            branch=_s(data, "branch"),
            base=_s(data, "base"),
            head=_s(data, "head"),
            tree=_s(data, "tree"),
            patch_id=_s(data, "patch_id"),
            bites=tuple(
                BiteRecord(_s(b, "file"), _s(b, "header"), _s(b, "verdict"), _strs(b.get("failing_tests")))
                for b in _tables(data.get("bite"))
            ),
            probes=tuple(
                ProbeRecord(_s(p, "name"), _s(p, "code"), _s(p, "branch"), _s(p, "base"))
                for p in _tables(data.get("probe"))
            ),
            comments=tuple(
                CommentRecord(
                    _s(c, "file"),
                    _s(c, "header"),
                    c["line"] if isinstance(c.get("line"), int) else None,
                    _s(c, "text"),
                )
                for c in _tables(data.get("comment"))
            ),
            findings=tuple(
                FindingRecord(_s(f, "kind"), _s(f, "message")) for f in _tables(data.get("finding"))
            ),
        )

    def to_toml(self) -> str:
        """Return this review as one `[[review]]` TOML table (tomli-w), ending in a newline."""
        table: dict[str, Any] = {
            "id": self.id,
            "verdict": self.verdict,
            "reason": self.reason,
            "reviewer": self.reviewer,
            "at": self.at.astimezone(timezone.utc).replace(microsecond=0),
            "tool": self.tool,
            "branch": self.branch,
            "base": self.base,
            "head": self.head,
            "tree": self.tree,
            "patch_id": self.patch_id,
        }
        subtables: list[tuple[str, dict[str, Any]]] = []
        for b in self.bites:
            bite = {"file": b.file, "header": b.header, "verdict": b.verdict, "failing_tests": list(b.failing_tests)}
            subtables.append(("bite", bite))
        for p in self.probes:
            subtables.append(("probe", {"name": p.name, "code": p.code, "branch": p.branch, "base": p.base}))
        for c in self.comments:
            line = {} if c.line is None else {"line": c.line}  # TOML has no null: a hunk comment has no line
            subtables.append(("comment", {"file": c.file, "header": c.header, **line, "text": c.text}))
        for f in self.findings:
            subtables.append(("finding", {"kind": f.kind, "message": f.message}))
        # Newlines stay escaped (no multiline strings): a line that is exactly
        # `[[review]]` can then only ever be a table header, which the reader relies on.
        text = tomli_w.dumps({"review": [_clean(table)]})
        # tomli-w writes `2026-11-29 17:00:00+00:00`; the contract spells it `2026-11-29T17:00:00Z`.
        text = _AT_LINE.sub(r"at = \1T\2Z", text, count=1)
        # Sub-tables are written one by one: tomli-w would fold short ones into
        # inline tables, and the contract (and readers of `git log`) expect `[[review.bite]]`.
        for name, sub in subtables:
            text += f"\n[[review.{name}]]\n" + tomli_w.dumps(_clean(sub))
        return text

    def at_iso(self) -> str:
        """Return `at` as ISO 8601 UTC with a `Z`, e.g. `2026-11-29T17:00:00Z`."""
        return self.at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def git_identity(repo_dir: str | Path) -> str:
    """Return the reviewer as `Name <email>` from git's author identity (config, then env).

    Raises ReviewError when git has no identity for the user.
    """
    try:
        ident = run_git(repo_dir, "var", "GIT_AUTHOR_IDENT").decode("utf-8", "replace").strip()
    except ReviewError as e:
        raise ReviewError("no git identity: set git config user.name and user.email") from e
    # "Name <email> 1700000000 +0000": drop the timestamp and zone.
    return ident.rsplit(" ", 2)[0]


# --- note bodies ------------------------------------------------------------


@dataclass(frozen=True)
class NoteChunk:
    """A piece of a note body: one review, or foreign text kept as it is."""

    text: str
    """The chunk's exact text (undecodable bytes kept as surrogate escapes)."""
    review: Review | None = None
    """The review the chunk holds, or None for foreign text."""


def parse_note(body: str) -> tuple[NoteChunk, ...]:
    """Return the chunks of a note body, in order; their texts concatenate to `body`."""
    lines = body.splitlines(keepends=True)
    segments: list[str] = []
    current: list[str] = []
    for line in lines:
        if line.strip() == "[[review]]" and current:
            segments.append("".join(current))
            current = []
        current.append(line)
    if current:
        segments.append("".join(current))
    chunks: list[NoteChunk] = []
    for seg in segments:
        for chunk in _parse_segment(seg):
            if chunk.review is None and chunks and chunks[-1].review is None:
                chunks[-1] = NoteChunk(chunks[-1].text + chunk.text)
            else:
                chunks.append(chunk)
    return tuple(chunks)


def reviews_in(body: str) -> list[Review]:
    """Return the reviews of a note body in order, de-duplicated by id."""
    seen: set[str] = set()
    out: list[Review] = []
    for chunk in parse_note(body):
        if chunk.review is not None and chunk.review.id not in seen:
            seen.add(chunk.review.id)
            out.append(chunk.review)
    return out


def append_text(body: str, piece: str) -> str:
    """Return `body` with `piece` added after a blank line; `body` itself is kept unchanged."""
    if body == "":
        return piece
    return body + ("" if body.endswith("\n") else "\n") + "\n" + piece


def _parse_segment(seg: str) -> list[NoteChunk]:
    if not seg.lstrip().startswith("[[review]]"):
        return [NoteChunk(seg)]
    review, err_line = _load_review(seg)
    if review is not None:
        return [NoteChunk(seg, review)]
    if err_line and err_line > 1:
        lines = seg.splitlines(keepends=True)
        head = "".join(lines[: err_line - 1])
        review, _ = _load_review(head)
        if review is not None:
            return [NoteChunk(head, review), NoteChunk("".join(lines[err_line - 1 :]))]
    return [NoteChunk(seg)]


def _load_review(text: str) -> tuple[Review | None, int | None]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"at line (\d+)", str(e))
        return None, int(m.group(1)) if m else None
    tables = doc.get("review")
    if not isinstance(tables, list) or len(tables) != 1:
        return None, None
    return Review.from_mapping(tables[0]), None


# --- the notes tree, with plumbing only --------------------------------------


@dataclass(frozen=True)
class NotesSnapshot:
    """The notes ref at one moment: its commit and where each note lives."""

    repo_dir: Path
    """The repository."""
    ref: str
    """The notes ref, e.g. `refs/notes/reviewui`."""
    commit: str | None
    """The notes commit the ref pointed at, or None when the ref did not exist."""
    entries: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    """Every path in the notes tree (blobs and subtrees) -> (mode, type, sha)."""
    notes: dict[str, str] = field(default_factory=dict)
    """Annotated object SHA -> path of its note in the tree (fanout included)."""

    def blob(self, obj: str) -> str | None:
        """Return the blob SHA of the note on `obj`, or None."""
        path = self.notes.get(obj)
        return self.entries[path][2] if path else None

    def read(self, obj: str) -> str | None:
        """Return the text of the note on `obj` (bytes kept via surrogateescape), or None."""
        sha = self.blob(obj)
        if sha is None:
            return None
        return run_git(self.repo_dir, "cat-file", "blob", sha).decode("utf-8", "surrogateescape")

    def read_all(self) -> dict[str, str]:
        """Return the text of every note, keyed by annotated object SHA, in one git call."""
        shas = {obj: self.entries[p][2] for obj, p in self.notes.items()}
        blobs = read_blobs(self.repo_dir, list(set(shas.values())))
        return {obj: blobs[sha].decode("utf-8", "surrogateescape") for obj, sha in shas.items()}


def check_ref(repo_dir: str | Path, ref: str) -> str:
    """Return `ref` when it is a valid full ref name; raise ReviewError otherwise."""
    if not ref.startswith("refs/"):
        raise ReviewError(f"not a valid notes ref (must start with refs/): {ref!r}")
    try:
        run_git(repo_dir, "check-ref-format", ref)
    except ReviewError as e:
        raise ReviewError(f"not a valid notes ref: {ref!r}") from e
    return ref


def snapshot(repo_dir: str | Path, ref: str) -> NotesSnapshot:
    """Return the current state of the notes ref `ref` (empty when it does not exist)."""
    repo = Path(repo_dir)
    commit = rev_parse(repo, ref)
    if commit is None:
        return NotesSnapshot(repo, ref, None)
    entries: dict[str, tuple[str, str, str]] = {}
    notes: dict[str, str] = {}
    for rec in run_git(repo, "ls-tree", "-r", "-t", "-z", commit).split(b"\0"):
        if not rec:
            continue
        meta, _, raw_path = rec.partition(b"\t")
        mode, kind, sha = meta.decode().split(" ")
        path = raw_path.decode("utf-8", "surrogateescape")
        entries[path] = (mode, kind, sha)
        obj = path.replace("/", "")
        if kind == "blob" and _HEX.fullmatch(obj) and obj not in notes:
            notes[obj] = path
    return NotesSnapshot(repo, ref, commit, entries, notes)


def read_blobs(repo_dir: str | Path, shas: list[str]) -> dict[str, bytes]:
    """Return the contents of the blobs `shas`, read in one `git cat-file --batch`."""
    if not shas:
        return {}
    out = run_git(repo_dir, "cat-file", "--batch", input="".join(s + "\n" for s in shas).encode())
    blobs: dict[str, bytes] = {}
    pos = 0
    for sha in shas:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].split()
        if len(header) != 3:
            raise ReviewError(f"git cat-file: cannot read object {sha}")
        size = int(header[2])
        blobs[sha] = out[nl + 1 : nl + 1 + size]
        pos = nl + 1 + size + 1
    return blobs


@dataclass(frozen=True)
class NotesEdit:
    """What one notes transaction writes."""

    bodies: dict[str, str]
    """Annotated object SHA -> the full new body of its note."""
    message: str
    """The notes commit message."""
    extra_parents: tuple[str, ...] = ()
    """Parents besides the current notes commit (a merged remote notes commit)."""
    move_to: str | None = None
    """When set, point the ref at this existing commit instead (a fast-forward)."""


def transact(
    repo_dir: str | Path,
    ref: str,
    change: Callable[[NotesSnapshot], NotesEdit | None],
    *,
    timeout: float = 60.0,
) -> NotesEdit | None:
    """Apply `change` to the notes ref atomically, retrying when another writer wins.

    `change` is called with a fresh snapshot on every attempt and returns
    the edit to make, or None for nothing to do. Returns the edit applied.
    Raises ReviewError when the ref cannot be moved within `timeout` seconds
    or git fails in a way a retry does not fix.
    """
    check_ref(repo_dir, ref)
    deadline = time.monotonic() + timeout
    attempt = stuck = 0
    while True:
        snap = snapshot(repo_dir, ref)
        edit = change(snap)
        if edit is None:
            return None
        new = edit.move_to or _write_commit(snap, edit)
        try:
            run_git(repo_dir, "update-ref", "-m", edit.message, ref, new, snap.commit or "")
            return edit
        except ReviewError as e:
            # The ref moved under us (another writer) or its lock is held: retry.
            stuck = 0 if snapshot(repo_dir, ref).commit != snap.commit else stuck + 1
            if time.monotonic() > deadline or stuck > 40:
                raise ReviewError(f"could not update {ref}: {e}") from e
        attempt += 1
        time.sleep(random.uniform(0.002, min(0.25, 0.005 * 2 ** min(attempt, 8))))


def _write_commit(snap: NotesSnapshot, edit: NotesEdit) -> str:
    repo = snap.repo_dir
    entries = dict(snap.entries)
    dirty: set[str] = {""}
    for obj, body in edit.bodies.items():
        blob = run_git(repo, "hash-object", "-w", "--stdin", input=body.encode("utf-8", "surrogateescape"))
        path = snap.notes.get(obj, obj)  # a new note goes at the top level, which git reads fine
        entries[path] = ("100644", "blob", blob.decode().strip())
        parts = path.split("/")
        dirty.update("/".join(parts[:i]) for i in range(1, len(parts)))
    children: dict[str, list[str]] = {}
    for path in entries:
        children.setdefault(path.rpartition("/")[0], []).append(path)
    built: dict[str, str] = {}
    # One `mktree --batch` per depth, deepest first, so a parent sees its new subtrees.
    for depth in sorted({d.count("/") + (1 if d else 0) for d in dirty}, reverse=True):
        level = sorted(d for d in dirty if d.count("/") + (1 if d else 0) == depth)
        records = []
        for d in level:
            rows = []
            for child in children.get(d, []):
                mode, kind, sha = entries[child]
                sha = built.get(child, sha) if kind == "tree" else sha
                name = child.rpartition("/")[2]
                rows.append(f"{mode} {kind} {sha}\t{name}".encode("utf-8", "surrogateescape"))
            records.append(b"\0".join(rows) + b"\0")
        out = run_git(repo, "mktree", "-z", "--batch", input=b"\0".join(records)).decode().split()
        built.update(zip(level, out))
    parents = [p for p in (snap.commit, *edit.extra_parents) if p]
    args = [a for p in parents for a in ("-p", p)]
    return run_git(repo, "commit-tree", built[""], *args, "-m", edit.message).decode().strip()


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

    def change(snap: NotesSnapshot) -> NotesEdit:
        body = snap.read(head) or ""
        message = f"reviewui: {review.verdict} {review.branch} {head[:12]}"
        return NotesEdit({head: append_text(body, piece)}, message)

    transact(repo_dir, ref, change)


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


# --- the log ------------------------------------------------------------------


def review_relation(review: Review, head: str, current_patch_id: str) -> str:
    """Return how `review` relates to the branch now.

    `this-head` when it judged `head` itself; `same-patch` when it judged an
    earlier head whose patch-id equals the current one (a rebase);
    `different-patch` otherwise (the code changed since).
    """
    if review.head == head:
        return "this-head"
    # An empty diff has patch-id "": equal only counts when it is a real id.
    if current_patch_id and review.patch_id == current_patch_id:
        return "same-patch"
    return "different-patch"


def log_json(
    repo_dir: str | Path, branch: str, base: str, head: str, ref: str = DEFAULT_NOTES_REF
) -> dict[str, Any]:
    """Return the `reviewui log --format json` document for `branch`.

    `{"reviews": [{"id", "verdict", "reason", "reviewer", "at", "branch",
    "base", "head", "patch_id", "current"}]}`, oldest first; `current` is
    true when the review's patch-id equals base..head's patch-id now (or it
    judged this very head). Raises ReviewError for an unknown base or head.
    """
    head_sha, base_sha = rev_parse(repo_dir, head), rev_parse(repo_dir, base)
    if head_sha is None or base_sha is None:
        raise ReviewError(f"no such commit: {head if head_sha is None else base}")
    now = patch_id(repo_dir, base_sha, head_sha)
    return {
        "reviews": [
            {
                "id": r.id,
                "verdict": r.verdict,
                "reason": r.reason,
                "reviewer": r.reviewer,
                "at": r.at_iso(),
                "branch": r.branch,
                "base": r.base,
                "head": r.head,
                "patch_id": r.patch_id,
                "current": review_relation(r, head_sha, now) != "different-patch",
            }
            for r in branch_history(repo_dir, branch, head_sha, ref)
        ]
    }


def render_log_text(
    repo_dir: str | Path, branch: str, base: str, head: str, ref: str = DEFAULT_NOTES_REF
) -> str:
    """Return the `reviewui log` text for `branch`: one block per review, oldest first.

    Control characters in stored text are shown escaped, never sent to the
    terminal. Raises ReviewError for an unknown base or head.
    """
    head_sha, base_sha = rev_parse(repo_dir, head), rev_parse(repo_dir, base)
    if head_sha is None or base_sha is None:
        raise ReviewError(f"no such commit: {head if head_sha is None else base}")
    reviews = branch_history(repo_dir, branch, head_sha, ref)
    if not reviews:
        return f"no reviews of {_safe(branch)} under {ref}\n"
    now = patch_id(repo_dir, base_sha, head_sha)
    labels = {
        "this-head": "this head",
        "same-patch": "same patch, earlier head",
        "different-patch": "OUTDATED",
    }
    lines = []
    for r in reviews:
        rel = labels[review_relation(r, head_sha, now)]
        lines.append(f"{r.at_iso()}  {r.verdict:7}  {_safe(r.reviewer)}  {_safe(r.head[:12])}  ({rel})")
        lines.extend(f"    {_safe(part)}" for part in r.reason.splitlines())
    return "\n".join(lines) + "\n"


def _safe(text: str) -> str:
    return "".join(ch if ch.isprintable() or ch == "\t" else repr(ch)[1:-1] for ch in text)


def _s(data: Any, key: str) -> str:
    v = data.get(key) if isinstance(data, dict) else None
    return v if isinstance(v, str) else "" if v is None else str(v)


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _tables(value: Any) -> list[dict[str, Any]]:
    return [t for t in value if isinstance(t, dict)] if isinstance(value, list) else []


def _when(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
    if isinstance(value, str):
        try:
            return _when(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            pass
    return EPOCH


def _clean(value: Any) -> Any:
    # Lone surrogates (from undecodable file names) cannot be written as UTF-8 TOML.
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value
