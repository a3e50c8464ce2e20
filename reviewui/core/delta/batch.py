"""The deltas of many branches at once, for the queue: `compute_delta` of each, its diffs read in batches.

Each ask is (judged base, judged head, base, head), as `compute_delta` takes
them. Its three diffs (the patch judged, the patch now, the judged head to the
head now) are read with every other ask's of the batch in a handful of git
processes (core/diff_batch.py) and classified by the one function `reviewui
delta` uses (`compute.delta_of`), so the queue's count is the command's.
Asks that cannot go in a batch (a name that is not a commit here, settings of
the reviewer's diff that plumbing cannot be given) are computed one by one by
`compute_delta` on a few threads; so is the rest of a batch whose git failed.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator, Sequence

from reviewui.core.delta.compute import compute_delta, delta_of
from reviewui.core.delta.model import Delta
from reviewui.core.diff_batch import load_diffs, porcelain_options
from reviewui.core.errors import ReviewError
from reviewui.core.git import run_git

Ask = tuple[str, str, str, str]
"""(judged base, judged head, base, head): compute_delta's arguments."""

BATCH = 100
"""Asks whose diffs are read together (their file lists are held at once)."""
THREADS = 4
"""Asks computed at once one by one (each mostly git's work, in processes of its own)."""


def compute_deltas(repo_dir: str | Path, asks: Sequence[Ask]) -> Iterator[tuple[Ask, Delta | None]]:
    """(ask, its Delta) for each distinct ask, in no set order: what compute_delta returns for it, or None
    where compute_delta fails (a commit this clone lacks)."""
    todo = list(dict.fromkeys(asks))
    if not todo:
        return
    commits = _commits(repo_dir, {n for a in todo for n in a})
    options = porcelain_options(repo_dir)
    # names other than the commits' own ids (a branch name in a hand-made note) go alone: a Delta names
    # the commits as asked
    batched = [a for a in todo if all(commits.get(n) == n for n in a)] if options is not None else []
    alone = [a for a in todo if a not in set(batched)]
    for i in range(0, len(batched), BATCH):
        chunk = batched[i : i + BATCH]
        done: set[Ask] = set()
        try:
            for ask, delta in _batch(repo_dir, chunk, options or ()):
                done.add(ask)
                yield ask, delta
        except ReviewError:
            alone += [a for a in chunk if a not in done]
    yield from _one_by_one(repo_dir, alone)


def _batch(repo_dir: str | Path, asks: list[Ask], options: tuple[str, ...]) -> Iterator[tuple[Ask, Delta | None]]:
    """Each ask's delta from diffs read together (diff_batch.load_diffs); raises ReviewError as it does."""
    pairs: list[tuple[str, str]] = []
    for since_base, since, base, head in asks:
        pairs += [(since_base, since), (base, head)] + ([(since, head)] if since != head else [])
    diffs = load_diffs(repo_dir, pairs, options)
    for since_base, since, base, head in asks:
        judged, now = next(diffs), next(diffs)
        between = next(diffs) if since != head else None
        try:
            delta: Delta | None = delta_of(judged, now, between)
        except Exception:  # noqa: BLE001 - as _one: whatever compute_delta cannot do is no delta
            delta = None
        yield (since_base, since, base, head), delta
    for _ in diffs:  # none left: lets the stream check git's end
        pass


def _one(repo_dir: str | Path, ask: Ask) -> Delta | None:
    try:
        return compute_delta(repo_dir, *ask)
    except Exception:  # noqa: BLE001 - a verdict's commits this clone lacks: no delta to show
        return None


def _one_by_one(repo_dir: str | Path, asks: list[Ask]) -> Iterator[tuple[Ask, Delta | None]]:
    if len(asks) <= 1:
        yield from ((a, _one(repo_dir, a)) for a in asks)
        return
    with ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="delta") as pool:
        yield from zip(asks, pool.map(lambda a: _one(repo_dir, a), asks), strict=True)


def _commits(repo_dir: str | Path, names: set[str]) -> dict[str, str]:
    """Name -> full commit id, for the names that are commits here (one `cat-file --batch-check`)."""
    wanted = sorted(n for n in names if n and not n.startswith("-") and not any(c in n for c in "\n\r"))
    if not wanted:
        return {}
    out = run_git(repo_dir, "cat-file", "--buffer", "--batch-check=%(objectname) %(objecttype)",
                  input="".join(n + "\n" for n in wanted).encode("utf-8", "surrogateescape"), check=False)
    found: dict[str, str] = {}
    for name, line in zip(wanted, out.decode("ascii", "replace").splitlines(), strict=False):
        sha, _, kind = line.partition(" ")
        if kind == "commit":
            found[name] = sha
    return found
