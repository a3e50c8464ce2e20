"""The evidence store as the review session reads and keeps it (a part of ReviewSession).

What the store holds for the branch under review, keyed as `bite` decides
(core/store/key.py), and each hunk's and guard's kept grade; the session's
one store, opened on first use.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reviewui.core.bite.report import BiteReport
    from reviewui.core.bite.truth_table import TruthTable
    from reviewui.core.config import Settings
    from reviewui.core.findings.model import Finding
    from reviewui.core.run_options import RunOptions
    from reviewui.core.store import EvidenceStore, StoreKey
    from reviewui.core.store.grades import GradeStore
    from reviewui.core.store.key import StoredEvidence
    from reviewui.core.target import Target


class SessionStore:
    """ReviewSession's evidence-store methods (mixed into it; the fields are the session's)."""

    target: "Target"
    settings: "Settings"
    run: "RunOptions"
    _lock: threading.Lock
    _store: "EvidenceStore | None"

    if TYPE_CHECKING:
        @property
        def test_command(self) -> str:
            """The session's test command (ReviewSession.test_command)."""

    @property
    def store(self) -> "EvidenceStore":
        """The user's evidence store, opened on first use (its `notice` says if it was set aside)."""
        with self._lock:
            if self._store is None:
                from reviewui.core.store import EvidenceStore

                self._store = EvidenceStore.open()
            return self._store

    def store_key(self) -> "StoreKey":
        """The key this review's evidence is stored under now (head, base, command, config, environment)."""
        from reviewui.core.store import key_for

        return key_for(self.target, self.test_command, self.settings, all_tests=self.run.all_tests)

    def grade_book(self) -> "GradeStore":
        """Each hunk's and guard's grade kept in the store by what decides it (core/bite/reuse.py): a sweep
        reuses those whose key did not change; with `--fresh` none (what it grades is still kept)."""
        import hashlib

        k = self.store_key()
        context = hashlib.sha256("\0".join((k.test_command, k.config, k.environment, k.version)).encode()).hexdigest()
        return self.store.grades(context, read=not self.run.fresh)

    def stored(self) -> "StoredEvidence":
        """What the store holds for this branch: the latest sweep and truth table, current or stale.

        With `--fresh` (RunOptions.fresh) nothing is read. Does not touch the
        ledger: add it with `evidence.add_stored` (current evidence only becomes the ledger's).
        """
        from reviewui.core.store.key import StoredEvidence

        if self.run.fresh:
            return StoredEvidence()
        store, key = self.store, self.store_key()
        bite = store.latest_bite(key)
        table = store.load_table(key) if bite is not None and bite.current else None
        return StoredEvidence(bite=bite, table=table, notice=store.notice)

    def save_evidence(self, report: "BiteReport", table: "TruthTable | None" = None,
                      findings: "list[Finding] | None" = None) -> bool:
        """Keep a finished whole-branch sweep (and its truth table and findings) in the store.

        A cancelled sweep is not kept. Returns True when the sweep was stored.
        """
        if report.baseline.reason == "cancelled" or any(r.reason == "cancelled" for r in report.results):
            return False
        from reviewui.core.store.summary import KIND, summarize

        store, key = self.store, self.store_key()
        saved = store.save_bite(key, report)
        if saved and table is not None and table.reason != "cancelled":
            store.save_table(key, table)
        if saved and findings is not None:
            store.save_findings(key, findings)
        if saved:  # what the queue reads of it (core/store/summary.py)
            store.save(key, KIND, summarize(report, findings))
        return saved
