"""Reading the review queue's state from the repository: branches, bases, verdicts, currency, sizes.

One `for-each-ref` lists the agent branches (trusted `queue-branches`,
default `refs/heads/agent/*`, plus `refs/remotes/*/agent/*` with `remotes`),
newest first, at most MAX_BRANCHES: how many more there are is counted and
said (`omitted`), never cut silently. The rest is batched (git_batch.py): one
`rev-list` for every branch's own commits and merge-base, one `diff-tree
--stdin` for the sizes, one patch-id stream for the branches whose verdict
judged another head, one read of every note (parsed notes kept by blob id),
one `cat-file --batch-check` for transcripts, a few store statements for the
evidence. Merge-bases, sizes, patch ids and each base's settings are kept by
(base, head) or tree in the user cache, so a refresh after one branch moved
costs that branch's git work only; that cache holds patch ids, so it is used
only while it is the user's alone (core/private.py). Each branch's verdict is
the verdict relation's (core/notes/relation.py); a branch whose verdict is
outdated gets its delta since that verdict (how many hunks are new or
changed: core/delta), cached by the four commits. Drawing the queue never
runs a test: evidence comes from the evidence store (queue/evidence.py).
"""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from reviewui.core.config import user_cache_dir, user_state_dir
from reviewui.core.git import run_git
from reviewui.core.queue import git_batch
from reviewui.core.queue.evidence import Wanted
from reviewui.core.queue.git_batch import MAX_BRANCHES, Ref
from reviewui.core.queue.order import NO_CHANGE, NO_COMMITS, PENDING, BranchRecord, Currency, Evidence, Row

if TYPE_CHECKING:
    from reviewui.core.store.db import EvidenceStore
    from reviewui.core.notes.index import NotesIndex
    from reviewui.core.notes.relation import WeighedReview

__all__ = ["DEFAULT_PATTERNS", "MAX_BRANCHES", "QueueSource", "QueueView", "read_queue", "read_records", "snooze"]

DEFAULT_PATTERNS = ("refs/heads/agent/*",)
REMOTE_PATTERNS = ("refs/remotes/*/agent/*",)
CURRENCY: dict[str, Currency] = {"this-head": "current", "same-patch": "carried", "outdated": "outdated"}
"""The verdict relation's currency in the queue's words."""


class _Cache:
    """(base, head) -> merge-base, size and patch id, and each base tree's settings, kept between reads.

    Used only while the file and its directories are the user's alone: a patch id planted by another
    user could carry an approval over a rework.
    """

    def __init__(self, path: Path) -> None:
        from reviewui.core.private import private_file

        self.path = path
        self.data: dict[str, dict[str, object]] = {}
        self.dirty = False
        self.usable = private_file(path, user_cache_dir()) is None
        self._lock = threading.Lock()
        if not self.usable:
            return
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
            self.dirty = True

    def save(self) -> None:
        with self._lock:
            if not (self.dirty and self.usable):
                return
            try:
                tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(json.dumps(self.data))  # dumps: the C encoder (dump streams through the Python one)
                os.replace(tmp, self.path)
                self.dirty = False
            except OSError:
                pass  # only speed is lost


@dataclass(frozen=True)
class QueueView:
    """The queue as read: its rows in order, and what it could not list."""

    rows: list[Row]
    omitted: int = 0
    """Branches matching the patterns beyond MAX_BRANCHES (the oldest), not listed."""
    notices: tuple[str, ...] = field(default_factory=tuple)
    """One line each for the reviewer (the evidence store could not be used, …)."""


def read_records(repo_dir: str | Path, base_ref: str, *, patterns: Sequence[str] = DEFAULT_PATTERNS,
                 remotes: bool = False, notes_ref: str = "refs/notes/reviewui",
                 transcript_paths: Sequence[str] = (), store: EvidenceStore | None = None) -> list[BranchRecord]:
    """Every listed agent branch as a BranchRecord (unordered; `order.order` sorts them). See read_queue."""
    return read_queue(repo_dir, base_ref, patterns=patterns, remotes=remotes, notes_ref=notes_ref,
                      transcript_paths=transcript_paths, store=store)[0]


def read_queue(
    repo_dir: str | Path,
    base_ref: str,
    *,
    patterns: Sequence[str] = DEFAULT_PATTERNS,
    remotes: bool = False,
    notes_ref: str = "refs/notes/reviewui",
    transcript_paths: Sequence[str] = (),
    store: EvidenceStore | None = None,
    limit: int = MAX_BRANCHES,
) -> tuple[list[BranchRecord], int]:
    """Every listed agent branch as a BranchRecord (unordered), and how many were left out past `limit`.

    With `store`, each row's evidence is read from it (queue/evidence.py); without, it is pending.
    """
    from reviewui.core.run.scratch_slots import repo_id

    repo = Path(repo_dir)
    base_tip = run_git(repo, "rev-parse", "--verify", f"{base_ref}^{{commit}}").decode().strip()
    refs, omitted = git_batch.list_refs(repo, [*patterns, *(REMOTE_PATTERNS if remotes else ())], limit)
    rid = repo_id(repo)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="queue-notes") as pool:
        # the notes are read and parsed while git works out the new heads' bases and sizes
        notes = pool.submit(_notes, repo, notes_ref, user_cache_dir() / "queue" / f"{rid}.notes.json")
        cache = _Cache(user_cache_dir() / "queue" / f"{rid}.json")
        todo = [r.head for r in refs if "base" not in cache.get(f"{base_tip}:{r.head}")]
        graph = git_batch.branch_graph(repo, base_tip, todo)
        _facts(repo, base_tip, todo, graph, cache)
        index = notes.result()
    reviewed = {r.name: name for r in refs if (name := _reviewed_as(index, r)) is not None} if index else {}
    in_graph = set(todo)
    more = [r.head for r in refs if r.name in reviewed and r.head not in in_graph]
    graph = graph.joined(git_batch.branch_graph(repo, base_tip, more)) if more else graph
    facts = {r.head: cache.get(f"{base_tip}:{r.head}") for r in refs}
    verdicts = _verdicts(repo, index, refs, reviewed, facts, graph, cache) if index and reviewed else {}
    snoozes = read_snoozes(repo)
    transcripts = _transcripts(repo, [r.head for r in refs], transcript_paths, cache)
    deltas = _deltas(repo, [(decided.review.base, decided.review.head, str(facts[r.head].get("base") or base_tip),
                              r.head) for r in refs for decided, _, _ in [verdicts.get(r.name, (None, 0, False))]
                             if decided is not None and decided.currency == "outdated" and decided.review.base],
                     cache)
    out: list[BranchRecord] = []
    for ref in refs:
        fact = facts[ref.head]
        base = str(fact.get("base") or base_tip)
        files = _int(fact.get("files"))
        empty = NO_COMMITS if base == ref.head else NO_CHANGE if files == 0 else ""
        decided, not_counted, mine = verdicts.get(ref.name, (None, 0, False))
        delta = deltas.get((decided.review.base, decided.review.head, base, ref.head)) \
            if decided is not None and decided.currency == "outdated" and decided.review.base else None
        out.append(BranchRecord(
            branch=ref.short, head=ref.head, base=base, changed_at=ref.when, merged=base == ref.head,
            verdict=decided.review.verdict if decided else None, verdict_by=decided.reviewer if decided else None,
            verdict_at=decided.review.at if decided else None,
            currency=CURRENCY[decided.currency] if decided else "none",
            verdict_provenance=decided.provenance if decided else "", not_counted=not_counted,
            snoozed=snoozes.get(ref.short) == ref.head, evidence=Evidence("empty", why=empty) if empty else PENDING,
            added=_int(fact.get("added")), removed=_int(fact.get("removed")), files=files,
            transcript="present" if ref.head in transcripts else "none", agent=ref.agent, task=ref.task,
            delta=delta, verdict_mine=mine,
        ))
    if store is not None:
        from reviewui.core.queue.evidence import settings_of_base, store_evidence

        asked = [Wanted(r.branch, r.head, r.base) for r in out if r.evidence.status != "empty"]
        found = store_evidence(repo, settings_of_base(repo, cache.get, cache.put), store)(asked) if asked else {}
        out = [r if r.branch not in found else _with_evidence(r, found[r.branch]) for r in out]
    cache.save()
    return out, omitted


def _with_evidence(record: BranchRecord, evidence: Evidence) -> BranchRecord:
    return replace(record, evidence=evidence)


def _transcripts(repo: Path, heads: list[str], paths: Sequence[str], cache: _Cache) -> set[str]:
    """The heads holding a transcript at one of `paths` (a head's answer is kept: its tree never changes)."""
    import hashlib

    where = hashlib.sha256("\0".join(paths).encode()).hexdigest()[:12]
    unknown = [h for h in heads if "t" not in cache.get(f"transcript:{where}:{h}")]
    found = git_batch.with_transcript(repo, unknown, paths)
    for h in unknown:
        cache.put(f"transcript:{where}:{h}", t=h in found)
    return {h for h in heads if cache.get(f"transcript:{where}:{h}").get("t") is True}


def _notes(repo: Path, ref: str, keep: Path) -> NotesIndex | None:
    """Every note under `ref`, parsed (None when there is no such ref or it cannot be read)."""
    from reviewui.core.errors import ReviewError
    from reviewui.core.notes.index import notes_index

    try:
        index = notes_index(repo, ref, keep)
    except ReviewError:
        return None
    return index if index.chunks else None


def _reviewed_as(index: NotesIndex | None, ref: Ref) -> str | None:
    """The branch name `ref`'s reviews are recorded under (a remote's branch: also without the remote), if any."""
    if index is None:
        return None
    names = [ref.short] + ([ref.short.split("/", 1)[-1]] if ref.name.startswith("refs/remotes/") else [])
    return next((n for n in names if n in index.by_branch), ref.short if ref.head in index.chunks else None)


def _facts(repo: Path, base_tip: str, heads: list[str], graph: git_batch.BranchGraph, cache: _Cache) -> None:
    """Merge-base and size of each of `heads` (not known yet) into the cache, in batched git calls."""
    if not heads:
        return
    bases = {h: graph.merge_base(h) or git_batch.merge_base(repo, base_tip, h) for h in dict.fromkeys(heads)}
    sizes = git_batch.diff_sizes(repo, [(b, h) for h, b in bases.items()])
    for head, base in bases.items():
        files, added, removed = sizes.get(head, (0, 0, 0))
        cache.put(f"{base_tip}:{head}", base=base, files=files, added=added, removed=removed)


def _verdicts(repo: Path, index: NotesIndex, refs: list[Ref], reviewed: dict[str, str],
              facts: dict[str, dict[str, object]], graph: git_batch.BranchGraph,
              cache: _Cache) -> dict[str, tuple[WeighedReview | None, int, bool]]:
    """Ref name -> (the branch's verdict as the verdict relation decides it, reviews that do not count,
    whether that verdict is the reviewer's own: their identity, recorded in this clone)."""
    from reviewui.core.notes import provenance
    from reviewui.core.notes.patchid import patch_ids
    from reviewui.core.notes.relation import Trust, weigh
    from reviewui.core.notes.trust import email_of

    trust = Trust.local(repo)
    listed = [r for r in refs if r.name in reviewed]
    want: list[tuple[str, str]] = []
    for r in listed:
        base = str(facts[r.head].get("base"))
        judged_elsewhere = any(c.review is not None and c.review.head != r.head
                               for obj in index.commits_for(reviewed[r.name], r.head) for c in index.chunks[obj])
        if judged_elsewhere and "id" not in cache.get(f"patch:{base}:{r.head}"):
            want.append((base, r.head))
    for (base, head), pid in (patch_ids(repo, want) if want else {}).items():
        cache.put(f"patch:{base}:{head}", id=pid)
    out: dict[str, tuple[WeighedReview | None, int, bool]] = {}
    for r in listed:
        base = str(facts[r.head].get("base"))
        known = cache.get(f"patch:{base}:{r.head}")
        found = weigh(repo, index, reviewed[r.name], r.head, trust=trust, branch_commits=graph.own_commits(r.head),
                      patch_now=str(known["id"]) if "id" in known else "")
        w = found.verdict
        mine = w is not None and bool(trust.me.email) and email_of(w.review.reviewer) == trust.me.email \
            and w.provenance == provenance.RECORDED
        out[r.name] = (w, len(found.not_counted), mine)
    return out


def _deltas(repo: Path, asks: list[tuple[str, str, str, str]], cache: _Cache) -> dict[tuple[str, str, str, str], int | None]:
    """Hunks new or changed since the verdict on (judged base, judged head) of each (judged base, judged
    head, base, head) (core/delta, the diffs of all not kept yet read in batches), kept by the four
    commits; None when unknown (a verdict's commits this clone lacks)."""
    todo = [a for a in dict.fromkeys(asks) if "n" not in cache.get("delta:" + ":".join(a))]
    if todo:  # imported only then: the diff model and unidiff are most of a warm read's imports
        from reviewui.core.delta.batch import compute_deltas

        for ask, delta in compute_deltas(repo, todo):
            counts = delta.counts() if delta is not None else None
            cache.put("delta:" + ":".join(ask), n=counts["changed"] + counts["new"] if counts is not None else None)
    found = {a: cache.get("delta:" + ":".join(a)).get("n") for a in dict.fromkeys(asks)}
    return {a: n if isinstance(n, int) else None for a, n in found.items()}


def snooze_path(repo: Path) -> Path:
    """Where the reviewer's snoozes for this repository are kept (branch → head when snoozed)."""
    from reviewui.core.run.scratch_slots import repo_id

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
    limit: int = MAX_BRANCHES
    """Branches listed at most (the rest counted and said)."""

    def read(self) -> QueueView:
        """The queue, read and ordered, with what it left out (git work: call it from a worker)."""
        from reviewui.core.queue.order import order
        from reviewui.core.store.db import EvidenceStore

        store = EvidenceStore.open()
        records, omitted = read_queue(
            self.repo, self.base, patterns=self.patterns, remotes=self.remotes, notes_ref=self.notes_ref,
            transcript_paths=self.transcript_paths, store=store, limit=self.limit)
        return QueueView(order(records), omitted, (store.notice,) if store.notice else ())

    def with_evidence(self, records: Sequence[BranchRecord]) -> list[BranchRecord]:
        """`records` with their evidence read again from the evidence store (a sweep just stored one), the
        rest of each as it was read (git work for their bases' settings: call it from a worker)."""
        from reviewui.core.queue.evidence import settings_of_base, store_evidence
        from reviewui.core.run.scratch_slots import repo_id
        from reviewui.core.store.db import EvidenceStore

        asked = [Wanted(r.branch, r.head, r.base) for r in records if r.evidence.status != "empty"]
        if not asked:
            return list(records)
        cache = _Cache(user_cache_dir() / "queue" / f"{repo_id(self.repo)}.json")
        found = store_evidence(self.repo, settings_of_base(self.repo, cache.get, cache.put), EvidenceStore.open())(asked)
        return [replace(r, evidence=found.get(r.branch, PENDING)) if r.evidence.status != "empty" else r
                for r in records]

    def rows(self) -> list[Row]:
        """The queue, read and ordered (git work: call it from a worker)."""
        return self.read().rows
