"""Reading the review queue's state from the repository: branches, bases, verdicts, currency, sizes.

One `for-each-ref` lists the agent branches (trusted `queue-branches`,
default `refs/heads/agent/*`, plus `refs/remotes/*/agent/*` with `remotes`);
one batched read of the notes ref gives every verdict (`notes/store.py`);
one `cat-file --batch-check` says which heads carry a transcript. Merge-bases,
diff sizes and patch-ids are per branch, computed on a few threads and cached
by (base, head) in the user cache, so a refresh after one branch moved costs
that branch's git calls only. A branch whose verdict is outdated gets its
delta since that verdict (how many hunks are new or changed: core/delta),
cached by the four commits. Drawing the queue never runs a test: evidence
comes from the evidence store through `evidence_for`.
"""

from __future__ import annotations

import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from reviewui.core.config import user_cache_dir, user_state_dir
from reviewui.core.git import run_git
from reviewui.core.queue.order import PENDING, BranchRecord, Currency, Evidence, Row

if TYPE_CHECKING:
    from reviewui.core.notes.model import Review

DEFAULT_PATTERNS = ("refs/heads/agent/*",)
REMOTE_PATTERNS = ("refs/remotes/*/agent/*",)
_TRAILER = re.compile(r"^(Agent|Task|Task-Id|Issue)\s*:\s*(.+)$", re.IGNORECASE)
MAX_BRANCHES = 5000
"""Branches listed at most (a hostile remote could push a million refs)."""


@dataclass(frozen=True)
class _Ref:
    name: str
    short: str
    head: str
    when: datetime
    agent: str | None
    task: str | None


def _refs(repo: Path, patterns: Sequence[str]) -> list[_Ref]:
    fmt = "%(refname)%00%(objectname)%00%(committerdate:unix)%00%(trailers:only,unfold)%00%01"
    raw = run_git(repo, "for-each-ref", f"--format={fmt}", "--count", str(MAX_BRANCHES), *patterns)
    out: list[_Ref] = []
    for record in raw.decode("utf-8", "replace").split("\x01"):
        parts = record.strip("\n").split("\x00")
        if len(parts) < 4 or not parts[0]:
            continue
        name, head, when, trailers = parts[0], parts[1], parts[2], parts[3]
        found = {m.group(1).lower(): m.group(2).strip()[:80]
                 for line in trailers.splitlines() if (m := _TRAILER.match(line))}
        short = name.removeprefix("refs/heads/").removeprefix("refs/remotes/")
        stamp = datetime.fromtimestamp(int(when) if when.isdigit() else 0, tz=timezone.utc)
        task = found.get("task") or found.get("task-id") or found.get("issue")
        out.append(_Ref(name, short, head, stamp, found.get("agent"), task))
    return out


class _Cache:
    """(base, head) → merge-base, size and patch-id, kept in the user cache between refreshes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, dict[str, object]] = {}
        self._lock = threading.Lock()
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(loaded, dict):
                self.data = {k: v for k, v in loaded.items() if isinstance(v, dict)}
        except (OSError, ValueError):
            pass

    def get(self, key: str) -> dict[str, object]:
        with self._lock:
            return dict(self.data.get(key, {}))

    def put(self, key: str, **values: object) -> None:
        with self._lock:
            self.data.setdefault(key, {}).update(values)

    def save(self) -> None:
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
                tmp.write_text(json.dumps(self.data), encoding="utf-8")
                os.replace(tmp, tmp.with_name(self.path.name))
            except OSError:
                pass  # only speed is lost


def _facts(repo: Path, base_tip: str, head: str, cache: _Cache) -> dict[str, object]:
    key = f"{base_tip}:{head}"
    known = cache.get(key)
    if "base" not in known:
        mb = run_git(repo, "merge-base", base_tip, head, check=False).decode().strip()
        known["base"] = mb or base_tip
        stat = run_git(repo, "diff", "--shortstat", "--no-ext-diff", "--no-textconv", str(known["base"]), head,
                       check=False).decode()
        nums = {w: int(n) for n, w in re.findall(r"(\d+) (file|insertion|deletion)", stat)}
        known.update(files=nums.get("file", 0), added=nums.get("insertion", 0), removed=nums.get("deletion", 0))
        cache.put(key, **known)
    return known


def _patch_id(repo: Path, base: str, head: str, cache: _Cache) -> str:
    from reviewui.core.notes.patchid import patch_id

    key = f"patch:{base}:{head}"
    known = cache.get(key)
    if "id" not in known:
        try:
            known["id"] = patch_id(repo, base, head)
        except Exception:
            known["id"] = ""
        cache.put(key, **known)
    return str(known["id"])


@dataclass(frozen=True)
class _Verdict:
    word: str
    by: str
    at: datetime
    head: str
    patch_id: str
    base: str = ""
    mine: bool = False


def _verdicts(repo: Path, notes_ref: str) -> dict[str, _Verdict]:
    """Branch name → its latest verdict, from one batched read of every note."""
    from reviewui.core.notes.model import reviews_in
    from reviewui.core.notes.store import snapshot

    try:
        bodies = snapshot(repo, notes_ref).read_all()
    except Exception:
        return {}
    latest: dict[str, _Verdict] = {}
    mine = _mine(repo)
    for body in bodies.values():
        try:
            reviews = reviews_in(body)
        except Exception:
            continue
        for r in reviews:
            if not r.branch:
                continue
            v = _Verdict(r.verdict, r.reviewer, r.at, r.head, r.patch_id, r.base, mine(r))
            if r.branch not in latest or latest[r.branch].at < r.at:
                latest[r.branch] = v
    return latest


def _mine(repo: Path) -> Callable[[Review], bool]:
    """Whether a review is the reviewer's own: their identity's email, and recorded in this clone (provenance)."""
    from reviewui.core.notes import provenance
    from reviewui.core.notes.trust import LocalReviewer, local_reviewer

    me = local_reviewer(repo).email
    known = provenance.load(repo) if me else {}
    return lambda r: bool(me) and LocalReviewer(r.reviewer, "").email == me and \
        known.get(provenance.key(r)) == provenance.RECORDED


def _delta(repo: Path, v: _Verdict, base: str, head: str, cache: _Cache) -> int | None:
    """Hunks new or changed since the verdict `v` (core/delta), cached by the four commits; None when unknown."""
    key = f"delta:{v.base}:{v.head}:{base}:{head}"
    known = cache.get(key)
    if "n" not in known:
        from reviewui.core.delta.compute import compute_delta

        try:
            counts = compute_delta(repo, v.base, v.head, base, head).counts()
        except Exception:  # a verdict's commits this clone lacks: no delta to show
            return None
        known["n"] = counts["changed"] + counts["new"]
        cache.put(key, **known)
    n = known["n"]
    return n if isinstance(n, int) else None


def _transcripts(repo: Path, heads: Sequence[str], paths: Sequence[str]) -> set[str]:
    """The heads whose tree holds a transcript at one of `paths` (one `cat-file --batch-check`)."""
    if not heads or not paths:
        return set()
    asks = [f"{h}:{p}" for h in heads for p in paths]
    out = run_git(repo, "cat-file", "--batch-check=%(objectname) %(objecttype)", input="\n".join(asks).encode() + b"\n",
                  check=False).decode("utf-8", "replace").splitlines()
    found: set[str] = set()
    for ask, line in zip(asks, out, strict=False):
        if line.endswith(" blob"):
            found.add(ask.split(":", 1)[0])
    return found


def snooze_path(repo: Path) -> Path:
    """Where the reviewer's snoozes for this repository are kept (branch → head when snoozed)."""
    from reviewui.core.run.worktree import repo_id

    return user_state_dir() / "queue" / f"{repo_id(repo)}.json"


def read_snoozes(repo: Path) -> dict[str, str]:
    """Branch → the head it was snoozed at."""
    try:
        data = json.loads(snooze_path(repo).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}


def snooze(repo: Path, branch: str, head: str) -> None:
    """Snooze `branch` until it moves from `head`."""
    data = read_snoozes(repo)
    data[branch] = head
    path = snooze_path(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def read_records(
    repo_dir: str | Path,
    base_ref: str,
    *,
    patterns: Sequence[str] = DEFAULT_PATTERNS,
    remotes: bool = False,
    notes_ref: str = "refs/notes/reviewui",
    transcript_paths: Sequence[str] = (),
    evidence_for: Callable[[str, str], Evidence | None] | None = None,
) -> list[BranchRecord]:
    """Every agent branch of the repository as a BranchRecord (unordered; `order.order` sorts them)."""
    from reviewui.core.run.worktree import repo_id

    repo = Path(repo_dir)
    base_tip = run_git(repo, "rev-parse", "--verify", f"{base_ref}^{{commit}}").decode().strip()
    refs = _refs(repo, [*patterns, *(REMOTE_PATTERNS if remotes else ())])
    cache = _Cache(user_cache_dir() / "queue" / f"{repo_id(repo)}.json")
    with ThreadPoolExecutor(max_workers=4) as pool:
        facts = list(pool.map(lambda r: _facts(repo, base_tip, r.head, cache), refs))
    verdicts = _verdicts(repo, notes_ref)
    snoozes = read_snoozes(repo)
    with_transcript = _transcripts(repo, [r.head for r in refs], transcript_paths)
    out: list[BranchRecord] = []
    for ref, fact in zip(refs, facts, strict=True):
        base = str(fact["base"])
        verdict = verdicts.get(ref.short) or verdicts.get(ref.short.split("/", 1)[-1] if ref.name.startswith(
            "refs/remotes/") else "")
        currency: Currency = "none"
        if verdict is not None:
            if verdict.head == ref.head:
                currency = "current"
            elif verdict.patch_id and verdict.patch_id == _patch_id(repo, base, ref.head, cache):
                currency = "carried"
            else:
                currency = "outdated"
        evidence = (evidence_for(ref.head, base) if evidence_for else None) or PENDING
        delta = _delta(repo, verdict, base, ref.head, cache) if verdict is not None and currency == "outdated" \
            and verdict.base else None
        out.append(BranchRecord(
            branch=ref.short, head=ref.head, base=base, changed_at=ref.when, merged=base == ref.head,
            verdict=verdict.word if verdict else None, verdict_by=verdict.by if verdict else None,
            verdict_at=verdict.at if verdict else None, currency=currency,
            snoozed=snoozes.get(ref.short) == ref.head, evidence=evidence,
            added=_int(fact.get("added")), removed=_int(fact.get("removed")), files=_int(fact.get("files")),
            transcript="present" if ref.head in with_transcript else "none", agent=ref.agent, task=ref.task,
            delta=delta, verdict_mine=verdict.mine if verdict else False,
        ))
    cache.save()
    return out


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


@dataclass(frozen=True)
class QueueSource:
    """Where the queue is read from (repository, base, which branches)."""

    repo: Path
    base: str
    patterns: tuple[str, ...]
    remotes: bool
    notes_ref: str
    transcript_paths: tuple[str, ...]

    def rows(self) -> list[Row]:
        """The queue, read and ordered (git work: call it from a worker)."""
        from reviewui.core.queue.evidence import store_evidence
        from reviewui.core.queue.order import order

        return order(read_records(self.repo, self.base, patterns=self.patterns, remotes=self.remotes,
                                  notes_ref=self.notes_ref, transcript_paths=self.transcript_paths,
                                  evidence_for=store_evidence(str(self.repo))))
