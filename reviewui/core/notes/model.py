"""A recorded verdict (`Review`) and its TOML form: one `[[review]]` table of a note.

`Review.new` stamps a verdict with what identifies it (id, reviewer, time,
tree, patch id, how its evidence was produced); `from_mapping` reads a parsed
table leniently (a table that is not a review is None) and `to_toml` writes
the contract's spelling. The evidence it carries is in records.py; the note
bodies holding reviews (and foreign text) in body.py.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import tomli_w

from reviewui import __version__
from reviewui.core.errors import ReviewError
from reviewui.core.git import rev_parse, run_git
from reviewui.core.notes.patchid import patch_id
from reviewui.core.notes.records import (
    BiteRecord,
    CommentRecord,
    FindingRecord,
    GuardRecord,
    ProbeRecord,
    TestRecord,
)

VERDICTS: tuple[str, ...] = ("approve", "reject")
TOOL = f"reviewui {__version__}"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_AT_LINE = re.compile(r"^at = (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\+00:00$", re.M)


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
