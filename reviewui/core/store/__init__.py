"""The evidence store: bite results, guard marks, truth tables and findings kept between runs.

One SQLite database in the user's state directory, keyed by what the evidence
was computed from (StoreKey: head, base, test command, trusted config,
environment, reviewui version). The review session saves after a sweep and
loads on open; the review queue and remote executors read the same store.
"""

from reviewui.core.store.db import EvidenceStore, StoredFindings, default_path
from reviewui.core.store.key import StoreKey, Stored, key_for

__all__ = ["EvidenceStore", "StoreKey", "Stored", "StoredFindings", "default_path", "key_for"]
