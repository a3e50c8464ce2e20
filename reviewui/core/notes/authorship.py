"""Line authorship from git-ai notes (`refs/notes/ai`): which agent and session wrote each changed line.

git-ai (github.com/git-ai-project/git-ai; format: docs/migrations/
sessions-v2-note-format.md, schema `authorship/3.0.0`) attaches a note to
each commit an agent helped write. A note is attestation lines, `---`, then
JSON metadata:

    src/main.rs
      s_c9883b05a2487d::t_9f8e7d6c5b4a32 1-10,15
      c9883b05a2487d6d 20-25
    ---
    {"schema_version": "authorship/3.0.0",
     "sessions": {"s_c9883b05a2487d": {"agent_id": {"tool": "cursor", "id": "…", "model": "…"}}},
     "prompts": {"c9883b05a2487d6d": {"agent_id": {…}, …}}, "humans": {"h_…": {…}}}

A file path line is followed by indented `KEY RANGES` lines; the line
numbers are the file's lines in that commit. A key `s_X::t_Y` resolves to
`sessions[s_X]`, `h_…` to `humans`, any other to `prompts`. Every note of
the commits in base..head is read (each at most `max-input-bytes`, as any
note), and `git blame` at the head maps each head line back to the commit
and line that introduced it, so a later commit moving lines keeps them
attributed. Everything read from a note is the branch's text: untrusted,
bounded here, and made terminal-safe before it is shown.

Kept apart from the verdict notes (`notes/store.py`, `notes/verdicts.py`):
a different ref, format and trust.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from reviewui.core.errors import ReviewError
from reviewui.core.git import read_blobs, run_git
from reviewui.core.safe_text import visible

DEFAULT_AUTHORSHIP_REF = "refs/notes/ai"
MAX_COMMITS = 2000
"""Commits of base..head whose notes are read at most (a longer branch is read to its newest 2000)."""
_MAX_FIELD = 200
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")
_MAX_LINE = 1_000_000
_MAX_ATTESTED = 2_000_000
"""Line attestations one note may expand to: a note claiming more (`1-9999999` twice) is not read."""


@dataclass(frozen=True)
class Author:
    """Who wrote a line, as a git-ai note says: an agent session (tool, session id, model) or a human."""

    tool: str
    """The agent (`cursor`, `claude`, `codex`, …), or `human` for a `h_` attestation."""
    session: str
    """The agent's own session (conversation) id; for a human, their name."""
    model: str = ""
    """The model, when the note names one."""

    @property
    def is_agent(self) -> bool:
        """True for an agent's line, False for a human's."""
        return self.tool != "human"

    def label(self) -> str:
        """A short label: `claude · 5c7d5c23` (the tool and the session id's first 8 characters)."""
        return f"{self.tool} · {self.session[:8]}" if self.session else self.tool


@dataclass(frozen=True)
class NoteAttestations:
    """One parsed note: per file the (key, line) pairs it attests, and the authors its keys name."""

    lines: dict[str, dict[int, str]] = field(default_factory=dict)
    """File (at the note's commit) → line number → attestation key."""
    authors: dict[str, Author] = field(default_factory=dict)
    """Attestation key → its author (keys the metadata does not name are left out)."""


@dataclass(frozen=True)
class Authorship:
    """The authorship of a branch's head lines, from the git-ai notes of base..head."""

    lines: dict[str, dict[int, Author]] = field(default_factory=dict)
    """Head file → head line number (1-based) → its author."""
    notes: int = 0
    """How many notes were read."""
    skipped: tuple[str, ...] = ()
    """Why a note or file was left out (too large, not a git-ai note), one line each."""

    def authors_of(self, file: str, lines: Iterable[int]) -> list[tuple[Author, int]]:
        """The authors of `lines` of head file `file`, each with how many of those lines it wrote, most first."""
        per = self.lines.get(file, {})
        counts: dict[Author, int] = {}
        for n in lines:
            a = per.get(n)
            if a is not None:
                counts[a] = counts.get(a, 0) + 1
        return sorted(counts.items(), key=lambda kv: -kv[1])

    def hunk_authors(self, hunk: Any) -> list[tuple[Author, int]]:
        """The authors of a hunk's added lines (duck-typed: `file`, `lines` with `kind` and `new_no`), most first."""
        return self.authors_of(hunk.file, (ln.new_no for ln in hunk.lines if ln.kind == "added" and ln.new_no))

    def hunk_records(self, hunks: Sequence[Any]) -> list[dict[str, Any]]:
        """`check --format json`'s `authors`: per hunk whose added lines a note attests, who wrote how many."""
        out: list[dict[str, Any]] = []
        for h in hunks:
            who = self.hunk_authors(h) if h.file in self.lines else []
            if who:
                out.append({"file": h.file, "hunk": h.index, "authors": [
                    {"tool": a.tool, "session": a.session, "model": a.model, "lines": n} for a, n in who]})
        return out

    def sessions(self) -> frozenset[str]:
        """Every agent session id the notes name."""
        return frozenset(a.session for per in self.lines.values() for a in per.values() if a.is_agent)


def _text(v: Any) -> str:
    return visible(v[:_MAX_FIELD]) if isinstance(v, str) else ""


def _author(key: str, meta: dict[str, Any]) -> Author | None:
    if key.startswith("h_"):
        humans = meta.get("humans")
        rec = humans.get(key) if isinstance(humans, dict) else None
        name = rec.get("author") or rec.get("name") if isinstance(rec, dict) else None
        return Author("human", _text(name) or key)
    table = meta.get("sessions" if key.startswith("s_") else "prompts")
    rec = table.get(key.split("::", 1)[0]) if isinstance(table, dict) else None
    agent = rec.get("agent_id") if isinstance(rec, dict) else None
    if not isinstance(agent, dict):
        return None
    return Author(_text(agent.get("tool")) or "agent", _text(agent.get("id")), _text(agent.get("model")))


def parse_note(text: str) -> NoteAttestations:
    """Parse one git-ai note; raises ValueError when it is not one (no `---` before JSON metadata)."""
    head, sep, tail = text.partition("\n---\n")
    if not sep and text.startswith("---\n"):
        head, tail, sep = "", text[4:], "---"
    if not sep:
        raise ValueError("no `---` separating attestations from metadata")
    meta = json.loads(tail)
    if not isinstance(meta, dict) or not str(meta.get("schema_version", "")).startswith("authorship/"):
        raise ValueError("metadata is not an authorship log (schema_version authorship/…)")
    lines: dict[str, dict[int, str]] = {}
    authors: dict[str, Author] = {}
    current: dict[int, str] | None = None
    attested = 0
    for raw in head.split("\n"):
        if not raw.strip():
            continue
        if not raw[:1].isspace():
            current = lines.setdefault(raw.strip(), {})
            continue
        if current is None:
            continue
        key, _, ranges = raw.strip().partition(" ")
        if key not in authors:
            who = _author(key, meta)
            if who is None:
                continue
            authors[key] = who
        for part in ranges.replace(" ", "").split(","):
            m = _RANGE.match(part)
            if m is None:
                continue
            lo = int(m.group(1))
            hi = min(int(m.group(2) or lo), lo + _MAX_LINE)
            attested += hi - lo + 1
            if attested > _MAX_ATTESTED:
                raise ValueError(f"attests more than {_MAX_ATTESTED} lines")
            for n in range(lo, hi + 1):
                current[n] = key
    return NoteAttestations(lines, authors)


def _notes_of(repo: str | Path, ref: str, commits: set[str]) -> dict[str, str]:
    """Commit → note blob sha, for the commits in `commits` that have a note under `ref`."""
    out = run_git(repo, "notes", f"--ref={ref}", "list", check=False, what="git notes")
    found: dict[str, str] = {}
    for ln in out.decode("ascii", "replace").splitlines():
        blob, _, commit = ln.partition(" ")
        if commit in commits:
            found[commit] = blob
    return found


def _blame(repo: str | Path, base: str, head: str, file: str) -> list[tuple[str, int, str]]:
    """Per head line of `file` (in order): the commit, its line there and the file's path there."""
    out = run_git(repo, "blame", "--porcelain", f"{base}..{head}", "--", file, check=False, what="git blame")
    rows: list[tuple[str, int, str]] = []
    paths: dict[str, str] = {}
    pending: tuple[str, int] | None = None
    for ln in out.decode("utf-8", "replace").split("\n"):
        if pending is None:
            parts = ln.split(" ")
            if len(parts) >= 3 and len(parts[0]) >= 40:
                pending = (parts[0], int(parts[1]))
            continue
        if ln.startswith("filename "):
            paths[pending[0]] = ln[len("filename "):]
        elif ln.startswith("\t"):
            rows.append((pending[0], pending[1], paths.get(pending[0], file)))
            pending = None
    return rows


def read_authorship(repo: str | Path, base: str, head: str, files: Iterable[str],
                    ref: str = DEFAULT_AUTHORSHIP_REF, cap: int | None = None) -> Authorship:
    """The authorship of `files` at `head`, from the git-ai notes under `ref` on the commits base..head.

    Each note is read to at most `cap` bytes (default `max-input-bytes`); a
    larger one, or one that is not a git-ai note, is left out and said in
    `skipped`. Raises ReviewError only when `ref` is not a notes ref.
    """
    if not ref.startswith("refs/notes/") or ".." in ref:
        raise ReviewError(f"authorship notes ref must be under refs/notes/, got {ref!r}")
    from reviewui.core.bounded import limit

    cap = limit("note") if cap is None else cap
    revs = run_git(repo, "rev-list", f"--max-count={MAX_COMMITS}", f"{base}..{head}", what="git rev-list")
    commits = set(revs.decode("ascii", "replace").split())
    blobs = _notes_of(repo, ref, commits)
    if not blobs:
        return Authorship()
    parsed: dict[str, NoteAttestations] = {}
    skipped: list[str] = []
    by_blob = {b: c for c, b in blobs.items()}
    for sha, blob in read_blobs(repo, list(by_blob), cap):
        commit = by_blob[sha]
        if blob is None:
            continue
        if blob.size > cap:
            skipped.append(f"note on {commit[:12]} is {blob.size} bytes, over max-input-bytes ({cap}): not read")
            continue
        try:
            parsed[commit] = parse_note(blob.data.decode("utf-8", "replace"))
        except ValueError as e:
            skipped.append(f"note on {commit[:12]} is not a git-ai authorship note: {visible(str(e))[:120]}")
    lines: dict[str, dict[int, Author]] = {}
    for f in files:
        per: dict[int, Author] = {}
        for n, (commit, orig, path) in enumerate(_blame(repo, base, head, f), start=1):
            note = parsed.get(commit)
            key = note.lines.get(path, {}).get(orig) if note is not None else None
            who = note.authors.get(key) if note is not None and key is not None else None
            if who is not None:
                per[n] = who
        if per:
            lines[f] = per
    return Authorship(lines, len(parsed), tuple(skipped))
