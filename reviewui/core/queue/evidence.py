"""The queue's evidence column, read from the evidence store: what a sweep of each branch's head found.

A row's evidence is `ready` when the store holds a sweep under exactly the
key a sweep of that branch would be stored under now (head, base, test
command, trusted config, environment, reviewui version: store/key.py's
`expected_key`), `broken` when that sweep's baseline was not green, `stale`
(with what changed) when the newest one stored was made from something else,
and `pending` when there is none. Which stored sweep a row is shown, and
whether it is current, is decided by the same function that decides it for
`bite` (EvidenceStore.latest_for_many). Only each sweep's summary is read
(store/summary.py). Nothing here runs a test.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from reviewui.core.queue.order import Evidence

if TYPE_CHECKING:
    from reviewui.core.store.db import EvidenceStore
    from reviewui.core.store.key import StoreKey, Stored
    from reviewui.core.store.summary import SweepSummary


@dataclass(frozen=True)
class Wanted:
    """A row whose evidence is asked for."""

    branch: str
    head: str
    base: str
    """The merge-base it is reviewed against."""


def store_evidence(repo: str | Path, base_config: Callable[[str], tuple[str, str]],
                   store: EvidenceStore) -> Callable[[Sequence[Wanted]], dict[str, Evidence]]:
    """`evidence_for(rows)` over the user's evidence store: branch -> its Evidence (absent: pending).

    `base_config(base)` is (test command, settings digest) of a review against `base` (the trusted
    settings there: the base's config, the user's, the reviewer's local one).
    """
    def evidence_for(rows: Sequence[Wanted]) -> dict[str, Evidence]:
        keys = expected_keys(str(repo), rows, base_config)
        return {w.branch: evidence_of(found) for w, found in zip(rows, lookup(store, list(keys)), strict=True)
                if found is not None}

    return evidence_for


def expected_keys(repo: str, rows: Sequence[Wanted], base_config: Callable[[str], tuple[str, str]]) -> list[StoreKey]:
    """The key each row's sweep would be stored under now (store/key.py's expected_key)."""
    from reviewui.core.store.key import environment_digest, expected_key

    environments: dict[str, str] = {}
    keys: list[StoreKey] = []
    for w in rows:
        command, config = base_config(w.base)
        if command not in environments:
            environments[command] = environment_digest(command)
        keys.append(expected_key(repo, w.branch, w.head, w.base, command, config,
                                 environment=environments[command]))
    return keys


def lookup(store: EvidenceStore, keys: list[StoreKey]) -> list[Stored[SweepSummary] | None]:
    """The stored summary `bite` would be shown for each key (current or stale), None where there is none.

    A sweep stored before summaries were (no summary row) is summarized from the sweep itself.
    """
    from reviewui.core.bite.report import BiteReport
    from reviewui.core.store.key import Stored
    from reviewui.core.store.summary import KIND, SweepSummary, summarize

    found = store.latest_for_many(keys, KIND, SweepSummary)
    older = [k for k in keys if k.digest not in found]
    if older:
        for digest, bite in store.latest_for_many(older, "bite", BiteReport).items():
            found[digest] = Stored(summarize(bite.value), bite.key, bite.saved_at, bite.changed)
    return [found.get(k.digest) for k in keys]


def evidence_of(stored: Stored[SweepSummary]) -> Evidence:
    """A row's Evidence from its stored summary: stale (with what changed), broken, or ready."""
    s = stored.value
    if not stored.current:
        return Evidence("stale", why=stored.changed_words())
    if s.baseline != "green":
        # Red is red: the branch's own tests red at the head are counted whatever the baseline was.
        return Evidence("broken", why=f"baseline {s.baseline}" + (f": {s.baseline_reason}" if s.baseline_reason else ""),
                        red_own=s.red_own)
    return Evidence("ready", bites=s.bites, total=s.total, toothless=s.toothless, findings=dict(s.findings),
                    contradicted=s.contradicted, config_changed=s.config_changed, red_own=s.red_own)


def settings_of_base(repo: Path, get: Callable[[str], dict[str, object]],
                     put: Callable[..., None]) -> Callable[[str], tuple[str, str]]:
    """`base_config(base)`: (test command, settings digest) of a review against the commit `base`, as a
    ReviewSession would resolve them, kept (`get(slot)`, `put(slot, **values)`) by the base's tree and the
    user's own config."""
    from reviewui.core.config import local_config, resolve_settings, user_settings_mapping
    from reviewui.core.errors import ReviewError
    from reviewui.core.git import run_git
    from reviewui.core.store.key import settings_digest

    mine = hashlib.sha256(json.dumps([user_settings_mapping(), local_config(repo)], sort_keys=True,
                                     default=str).encode()).hexdigest()[:16]
    known: dict[str, tuple[str, str]] = {}

    def base_config(base: str) -> tuple[str, str]:
        if base in known:
            return known[base]
        tree = run_git(repo, "rev-parse", f"{base}^{{tree}}", check=False).decode().strip()
        slot = f"settings:{tree}:{mine}"
        hit = get(slot) if tree else {}
        if isinstance(hit.get("command"), str) and isinstance(hit.get("config"), str):
            known[base] = (str(hit["command"]), str(hit["config"]))
            return known[base]
        try:
            settings = resolve_settings(repo, base, base)
        except ReviewError as e:  # the base's config is broken: no stored sweep can be current for it
            known[base] = ("", f"unreadable config: {e}")
            return known[base]
        known[base] = (settings.test_command, settings_digest(settings))
        if tree:
            put(slot, command=known[base][0], config=known[base][1])
        return known[base]

    return base_config
