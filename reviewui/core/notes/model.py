"""Verdict records and the note bodies that hold them (reading and writing text).

A note body is TOML: each verdict one `[[review]]` table. It is read by
cutting the body before every line tomllib reads as a `[[review]]` header
(layout.py): a piece that parses into one review with an `id` and a known
`verdict` is a review, anything else (a hand-written remark, another tool's
TOML, text appended after a review's signature) is foreign text kept byte
for byte. See verdicts.py for how verdicts are stored and why.
"""

from __future__ import annotations

import re
import tomllib
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import tomli_w

from reviewui import __version__
from reviewui.core.errors import ReviewError
from reviewui.core.git import rev_parse, run_git
from reviewui.core.notes.layout import pieces, split_piece
from reviewui.core.notes.patchid import patch_id


VERDICTS: tuple[str, ...] = ("approve", "reject")
TOOL = f"reviewui {__version__}"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_HEX = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_AT_LINE = re.compile(r"^at = (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\+00:00$", re.M)


@dataclass(frozen=True)
class GuardRecord:
    """One guard revert inside a hunk (see core/bite/guards.py), as graded at verdict time."""

    line: int
    """1-based line in the branch's file."""
    kind: str
    """condition | operand | boundary | early-exit | statement | body."""
    description: str
    """What the edit did."""
    verdict: str
    """The bite verdict for the guard (`toothless` is the evidence worth keeping)."""
    failing_tests: tuple[str, ...] = ()
    """Tests that failed with the guard reverted."""


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
    guards: tuple[GuardRecord, ...] = ()
    """The hunk's guard reverts, when they were checked (`[[review.bite.guards]]`)."""

    @classmethod
    def from_result(cls, r: Any) -> "BiteRecord":
        """The record of a bite module HunkResult (its guards included)."""
        guards = tuple(
            GuardRecord(g.line, g.kind, g.description, g.verdict, tuple(g.failing_tests))
            for g in getattr(r, "guards", ()) or ()
        )
        return cls(r.file, r.header, r.verdict, tuple(r.failing_tests), guards)


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
class TestRecord:
    """One row of the per-test truth table at verdict time (`[[review.test]]`)."""

    __test__ = False  # not a pytest test class, whatever its name

    id: str
    """The test's node id (parametrized cases by id)."""
    change: str
    """`added`, `changed`, or `unchanged` for an old test the branch turned red."""
    head: str
    """Its outcome at the head: passes | fails | errors | skipped | not-run."""
    base: str
    """Its outcome on the base commit's source with the branch's tests (same words)."""


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
    tests: tuple[TestRecord, ...] = ()
    """The per-test truth table at verdict time (new and changed tests, then regressions)."""
    sandbox: str = ""
    """How the evidence was produced: "bwrap", or "none" (run `--unsandboxed`); "" in older records."""
    limits: str = ""
    """How the runs' memory and processes were bounded: "cgroup-v1"/"cgroup-v2" (each run as a whole),
    "per-process", "none" (unsandboxed); "" in older records."""

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
        tests: tuple[TestRecord, ...] | list[TestRecord] = (),
        sandbox: str | None = None,
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
            tests=tuple(tests),
            sandbox=sandbox if sandbox is not None else _sandbox_level(),
            limits="none" if (sandbox if sandbox is not None else _sandbox_level()) == "none" else _limits_level(),
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
                BiteRecord(_s(b, "file"), _s(b, "header"), _s(b, "verdict"), _strs(b.get("failing_tests")),
                           tuple(_guard(g) for g in _tables(b.get("guards"))))
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
            tests=tuple(
                TestRecord(_s(t, "id"), _s(t, "change"), _s(t, "head"), _s(t, "base")) for t in _tables(data.get("test"))
            ),
            sandbox=_s(data, "sandbox"),
            limits=_s(data, "limits"),
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
            **({"sandbox": self.sandbox} if self.sandbox else {}),
            **({"limits": self.limits} if self.limits else {}),
        }
        subtables: list[tuple[str, dict[str, Any]]] = []
        for b in self.bites:
            bite = {"file": b.file, "header": b.header, "verdict": b.verdict, "failing_tests": list(b.failing_tests)}
            subtables.append(("bite", bite))
            for g in b.guards:  # `[[review.bite.guards]]` right after its bite: TOML appends it to that one
                subtables.append(("bite.guards", {"line": g.line, "kind": g.kind, "description": g.description,
                                                  "verdict": g.verdict, "failing_tests": list(g.failing_tests)}))
        for p in self.probes:
            subtables.append(("probe", {"name": p.name, "code": p.code, "branch": p.branch, "base": p.base}))
        for c in self.comments:
            line = {} if c.line is None else {"line": c.line}  # TOML has no null: a hunk comment has no line
            subtables.append(("comment", {"file": c.file, "header": c.header, **line, "text": c.text}))
        for f in self.findings:
            subtables.append(("finding", {"kind": f.kind, "message": f.message}))
        for t in self.tests:
            subtables.append(("test", {"id": t.id, "change": t.change, "head": t.head, "base": t.base}))
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


def _limits_level() -> str:
    """How this process bounds the runs it makes (see sandbox.limits_level)."""
    from reviewui.core.run import sandbox

    return sandbox.limits_level()


def _sandbox_level() -> str:
    """The sandbox this process runs agent code in ("bwrap" or "none")."""
    from reviewui.core.run import sandbox

    return sandbox.level()


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
    """Return the chunks of a note body, in order; their texts concatenate to `body`.

    A signed review's chunk is its payload and signature only, and its review
    is read from the payload alone: whatever follows the signature in the
    same piece is a foreign chunk of its own (see layout.py).
    """
    chunks: list[NoteChunk] = []
    foreign: list[str] = []  # runs of foreign text, joined once: a hostile note can hold 10^5 of them
    for piece in pieces(body):
        for chunk in _parse_piece(piece):
            if chunk.review is None:
                foreign.append(chunk.text)
                continue
            if foreign:
                chunks.append(NoteChunk("".join(foreign)))
                foreign = []
            chunks.append(chunk)
    if foreign:
        chunks.append(NoteChunk("".join(foreign)))
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


def _parse_piece(piece: str) -> list[NoteChunk]:
    parts = split_piece(piece)
    if parts.format is not None:
        review, _ = _load_review(parts.payload)
        if review is None:
            return [NoteChunk(piece)]  # nothing signed reads as a review: all of it is foreign
        rest = [NoteChunk(parts.rest)] if parts.rest else []
        return [NoteChunk(parts.payload + parts.signed, review), *rest]
    review, err_line = _load_review(piece)
    if review is not None:
        return [NoteChunk(piece, review)]
    if err_line and err_line > 1:
        lines = piece.splitlines(keepends=True)
        head = "".join(lines[: err_line - 1])
        review, _ = _load_review(head)
        if review is not None:
            return [NoteChunk(head, review), NoteChunk("".join(lines[err_line - 1 :]))]
    return [NoteChunk(piece)]


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


def _s(data: Any, key: str) -> str:
    v = data.get(key) if isinstance(data, dict) else None
    return v if isinstance(v, str) else "" if v is None else str(v)


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _guard(g: dict[str, Any]) -> GuardRecord:
    line = g.get("line")
    return GuardRecord(line if isinstance(line, int) else 0, _s(g, "kind"), _s(g, "description"), _s(g, "verdict"),
                       _strs(g.get("failing_tests")))


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
