"""The reviewer's local state for one branch: reviewed-hunk marks, hunk comments, kept probes.

It survives restarts but is nobody else's business, so it lives outside the
repository, in `user_state_dir()/<repo-id>/<branch-safe-name>.json`, and never
in the reviewer's checkout. `<repo-id>` is the repo folder's name plus a hash
of its git common dir (so linked worktrees of one repo share state);
`<branch-safe-name>` is the branch with unsafe characters replaced plus a
hash of the exact name (so `a/b` and `a_b` never collide). Saves are atomic
(temp file, fsync, rename): a crash leaves the old file or the new one. Two
processes saving the same branch: the last save wins.

A mark is keyed by (file, hunk header) and stores a hash of the hunk's body
(its text without the `@@` line). A hunk counts as marked when its body is
unchanged. When only the header moved (lines added above it), the mark
follows the body within the same file; when the body changed, the mark no
longer counts, and `drop_stale` forgets it. A file renamed since (the
since-verdict view knows which) takes its marks along (`follow_renames`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Protocol

from reviewui.core.config import user_state_dir
from reviewui.core.errors import ReviewError
from reviewui.core.git import git_common_dir

if TYPE_CHECKING:
    from reviewui.core.notes.records import CommentRecord, ProbeRecord

SCHEMA = 1


class HunkLike(Protocol):
    """Anything with a file, a header and the hunk text (reviewui.core.hunks.Hunk fits)."""

    @property
    def file(self) -> str: ...

    @property
    def header(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True)
class Mark:
    """A hunk the reviewer marked as reviewed."""

    file: str
    """Path of the file the hunk is in."""
    header: str
    """The hunk header when it was marked."""
    digest: str
    """sha256 of the hunk body when it was marked."""


@dataclass(frozen=True)
class HunkComment:
    """A comment on a hunk or one of its lines, to go into the verdict."""

    id: str
    """A uuid4, to remove it by."""
    file: str
    """Path of the file commented on."""
    header: str
    """Header of the hunk commented on."""
    line: int | None
    """New-side line number, or None for the whole hunk."""
    text: str
    """The comment."""


@dataclass(frozen=True)
class KeptProbe:
    """A probe the reviewer kept, with its last outcomes."""

    name: str
    """The probe's name (unique per branch)."""
    code: str
    """The probe's source code."""
    outcomes: dict[str, str] = field(default_factory=dict)
    """Last outcome per place it ran, e.g. {"branch": "pass", "base": "fail"}."""


def hunk_digest(hunk_text: str) -> str:
    """Return the hash a mark stores: sha256 of the hunk text without its `@@` header line."""
    first, nl, rest = hunk_text.partition("\n")
    body = rest if first.startswith("@@") else hunk_text
    return hashlib.sha256(body.encode("utf-8", "surrogateescape")).hexdigest()


def state_path(repo_dir: str | Path, branch: str) -> Path:
    """Return the JSON file holding the state of `branch` in the repo at `repo_dir`.

    Raises ReviewError when `repo_dir` is not in a git repository.
    """
    common = Path(os.path.realpath(git_common_dir(repo_dir)))
    repo_hash = hashlib.sha256(str(common).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    # Named after the main checkout (the folder holding .git), whichever worktree we are in.
    readable = common.parent.name if common.name == ".git" else common.name
    repo_id = f"{_safe_name(readable)}-{repo_hash}"
    branch_hash = hashlib.sha256(branch.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return user_state_dir() / repo_id / f"{_safe_name(branch)}-{branch_hash}.json"


class ReviewState:
    """Marks, comments and kept probes for one branch; change it, then `save()`."""

    def __init__(self, path: Path, branch: str, problem: str | None = None) -> None:
        self.path = path
        """Where the state is saved."""
        self.branch = branch
        """The branch it belongs to."""
        self.problem = problem
        """Why the saved state could not be read (it was set aside), or None."""
        self._marks: dict[tuple[str, str], Mark] = {}
        self._comments: list[HunkComment] = []
        self._probes: dict[str, KeptProbe] = {}

    @classmethod
    def load(cls, repo_dir: str | Path, branch: str) -> "ReviewState":
        """Return the saved state of `branch`, or an empty one.

        An unreadable file is renamed to `*.corrupt` (kept for the user) and
        reported in `problem` rather than raised. Raises ReviewError only when
        `repo_dir` is not a git repository.
        """
        path = state_path(repo_dir, branch)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
        except FileNotFoundError:
            return cls(path, branch)
        except (OSError, ValueError) as e:
            aside = path.with_name(path.name + ".corrupt")
            try:
                os.replace(path, aside)
            except OSError:
                pass
            return cls(path, branch, problem=f"review state unreadable ({e}); set aside as {aside.name}")
        state = cls(path, branch)
        for m in _dicts(data.get("marks")):
            if _all_str(m, "file", "header", "digest"):
                state._marks[(m["file"], m["header"])] = Mark(m["file"], m["header"], m["digest"])
        for c in _dicts(data.get("comments")):
            if _all_str(c, "id", "file", "header", "text"):
                line = c.get("line") if isinstance(c.get("line"), int) else None
                state._comments.append(HunkComment(c["id"], c["file"], c["header"], line, c["text"]))
        for p in _dicts(data.get("probes")):
            if _all_str(p, "name", "code"):
                raw = p.get("outcomes")
                outcomes = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
                state._probes[p["name"]] = KeptProbe(p["name"], p["code"], outcomes)
        return state

    # --- marks ---------------------------------------------------------------

    def mark(self, file: str, header: str, hunk_text: str) -> None:
        """Mark the hunk as reviewed, remembering its body as it is now."""
        self._marks[(file, header)] = Mark(file, header, hunk_digest(hunk_text))

    def unmark(self, file: str, header: str) -> bool:
        """Forget the mark on (file, header); return whether there was one."""
        return self._marks.pop((file, header), None) is not None

    def is_marked(self, file: str, header: str, hunk_text: str) -> bool:
        """Return True when this hunk's body is what was marked (at this header, or moved within the file)."""
        digest = hunk_digest(hunk_text)
        mark = self._marks.get((file, header))
        if mark is not None and mark.digest == digest:
            return True
        return any(m.file == file and m.digest == digest for m in self._marks.values())

    def marks(self) -> list[Mark]:
        """Return every mark, in the order they were made."""
        return list(self._marks.values())

    def progress(self, hunks: Iterable[HunkLike]) -> tuple[int, int]:
        """Return (marked, total) over `hunks`, e.g. (7, 12)."""
        hunks = list(hunks)
        return sum(self.is_marked(h.file, h.header, h.text) for h in hunks), len(hunks)

    def drop_stale(self, hunks: Iterable[HunkLike]) -> int:
        """Keep only marks whose hunk body is still among `hunks`; return how many were dropped.

        A kept mark is re-keyed to the hunk's current header when it moved.
        """
        current = {(h.file, hunk_digest(h.text)): h.header for h in hunks}
        kept: dict[tuple[str, str], Mark] = {}
        for m in self._marks.values():
            header = current.get((m.file, m.digest))
            if header is not None:
                kept[(m.file, header)] = Mark(m.file, header, m.digest)
        dropped = len(self._marks) - len(kept)
        self._marks = kept
        return dropped

    def follow_renames(self, renamed: Mapping[str, str]) -> int:
        """Move the marks of each renamed file (old path -> new path) to its new path; return how many moved.

        A hunk whose text is unchanged in a file renamed since it was marked is still the hunk marked.
        """
        moved = {k: Mark(renamed[m.file], m.header, m.digest) for k, m in self._marks.items() if m.file in renamed}
        for k, m in moved.items():
            del self._marks[k]
            self._marks.setdefault((m.file, m.header), m)
        return len(moved)

    # --- comments ------------------------------------------------------------

    def add_comment(self, file: str, header: str, text: str, line: int | None = None) -> HunkComment:
        """Add a comment on a hunk (or one line of it) and return it.

        Raises ReviewError when the text is empty.
        """
        if not text.strip():
            raise ReviewError("a comment needs some text")
        comment = HunkComment(str(uuid.uuid4()), file, header, line, text)
        self._comments.append(comment)
        return comment

    def comments(self, file: str | None = None) -> list[HunkComment]:
        """Return the comments (on `file` only when given), oldest first."""
        return [c for c in self._comments if file is None or c.file == file]

    def remove_comment(self, comment_id: str) -> bool:
        """Remove a comment by id; return whether it existed."""
        before = len(self._comments)
        self._comments = [c for c in self._comments if c.id != comment_id]
        return len(self._comments) != before

    def comment_records(self) -> tuple[CommentRecord, ...]:
        """Return the comments as verdict records."""
        from reviewui.core.notes.records import CommentRecord

        return tuple(CommentRecord(c.file, c.header, c.line, c.text) for c in self._comments)

    # --- probes --------------------------------------------------------------

    def keep_probe(self, name: str, code: str, outcomes: dict[str, str] | None = None) -> KeptProbe:
        """Keep (or replace) the probe called `name` and return it.

        Raises ReviewError when the name is empty.
        """
        if not name.strip():
            raise ReviewError("a kept probe needs a name")
        probe = KeptProbe(name, code, dict(outcomes or {}))
        self._probes[name] = probe
        return probe

    def set_probe_outcomes(self, name: str, outcomes: dict[str, str]) -> None:
        """Record the last outcomes of a kept probe; raises ReviewError when no probe has that name."""
        if name not in self._probes:
            raise ReviewError(f"no kept probe called {name!r}")
        self._probes[name] = KeptProbe(name, self._probes[name].code, dict(outcomes))

    def probes(self) -> list[KeptProbe]:
        """Return the kept probes, in the order they were first kept."""
        return list(self._probes.values())

    def forget_probe(self, name: str) -> bool:
        """Drop a kept probe; return whether it existed."""
        return self._probes.pop(name, None) is not None

    def probe_records(self) -> tuple[ProbeRecord, ...]:
        """Return the kept probes as verdict records (outcomes on branch and base)."""
        from reviewui.core.notes.records import ProbeRecord

        return tuple(
            ProbeRecord(p.name, p.code, p.outcomes.get("branch", ""), p.outcomes.get("base", ""))
            for p in self._probes.values()
        )

    # --- saving --------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """Return the state as the JSON document that `save` writes."""
        return {
            "schema": SCHEMA,
            "branch": self.branch,
            "marks": [{"file": m.file, "header": m.header, "digest": m.digest} for m in self._marks.values()],
            "comments": [
                {"id": c.id, "file": c.file, "header": c.header, "line": c.line, "text": c.text}
                for c in self._comments
            ],
            "probes": [
                {"name": p.name, "code": p.code, "outcomes": p.outcomes} for p in self._probes.values()
            ],
        }

    def save(self) -> None:
        """Write the state atomically. Raises ReviewError when the state dir is not writable."""
        # ensure_ascii keeps lone surrogates (undecodable file names) as valid JSON escapes.
        data = json.dumps(self.to_json(), indent=1, ensure_ascii=True).encode("ascii")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=self.path.name, suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as e:
            raise ReviewError(f"cannot save review state to {self.path}: {e.strerror or e}") from e


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".")[:80] or "_"


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _all_str(d: dict[str, Any], *keys: str) -> bool:
    return all(isinstance(d.get(k), str) for k in keys)
