"""GradeStore: each hunk's and each guard's grade, in the evidence store, by the key of what decides it.

A table of its own (`grades`) in the evidence store's database, through the
store's own connection (EvidenceStore.grades): a sweep asks for the keys of
every item it planned (core/bite/reuse.py makes them) and reuses what is
found; it keeps what it graded afresh. A row that does not decode as the
record it claims to be is treated as absent, like every row of the store;
rows are bounded in size and number (the oldest go first).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from typing import Callable, Sequence, TypeVar

from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.report import HunkResult
from reviewui.core.store.codec import CodecError, decode, encode

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_GRADE_BYTES = 256 * 1024
"""Bytes of JSON one grade may take (its captured output is capped first); a larger one is not kept."""
MAX_GRADES = 200_000
"""Grades kept; the oldest go first when a save passes this."""
OUTPUT_KEPT = 4 * 1024
"""Characters of a run's output kept with a grade (head and tail)."""
_CHUNK = 500
"""Keys asked of SQLite in one statement (older SQLite binds at most 999 parameters)."""
_KINDS: dict[str, type[HunkResult] | type[GuardResult]] = {"hunk": HunkResult, "guard": GuardResult}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS grades (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    saved_at REAL NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS grades_saved ON grades (saved_at);
"""

Use = Callable[[Callable[[sqlite3.Connection], T], T, str], T]
"""Run a function with the store's connection under its lock (`default` when unusable, or on an error)."""


class GradeStore:
    """Grades by key (core/bite/reuse.GradeBook), kept in the evidence store's database."""

    def __init__(self, use: Use[object], context: str, read: bool = True,
                 cap: Callable[[str, int], str] = lambda text, limit: text[:limit]) -> None:
        self._use = use
        self._cap = cap
        self._ready = False
        self.context = context
        """A digest of the trusted settings, the environment, the command and reviewui's version."""
        self.read = read
        """False with `--fresh`: nothing is reused, what is graded is still kept."""

    def _schema(self, conn: sqlite3.Connection) -> None:
        if not self._ready:
            conn.executescript(_SCHEMA)
            self._ready = True

    def get(self, keys: Sequence[str]) -> dict[str, HunkResult | GuardResult]:
        """The grades kept under `keys` (those that are, and decode)."""
        wanted = list(dict.fromkeys(keys))

        def read(conn: sqlite3.Connection) -> object:
            self._schema(conn)
            rows: list[tuple[str, str, str]] = []
            for i in range(0, len(wanted), _CHUNK):
                chunk = wanted[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows += conn.execute(
                    f"SELECT key, kind, payload FROM grades WHERE key IN ({marks}) "  # noqa: S608 - marks only
                    "AND length(CAST(payload AS BLOB)) <= ?", (*chunk, MAX_GRADE_BYTES)).fetchall()
            return rows

        found: dict[str, HunkResult | GuardResult] = {}
        rows = self._use(read, [], "grades not read")
        for key, kind, payload in rows if isinstance(rows, list) else []:
            cls = _KINDS.get(str(kind))
            if cls is None:
                continue
            try:
                found[str(key)] = decode(cls, json.loads(payload))
            except (CodecError, ValueError, RecursionError) as e:
                log.debug("stored grade ignored: %s", e)
        return found

    def put(self, grades: Sequence[tuple[str, HunkResult | GuardResult]]) -> None:
        """Keep `grades` under their keys (replacing what was there), each with its output capped."""
        from dataclasses import replace

        now = time.time()
        rows: list[tuple[str, str, float, str]] = []
        for key, g in grades:
            kind = "hunk" if isinstance(g, HunkResult) else "guard"
            payload = json.dumps(encode(replace(g, output=self._cap(g.output, OUTPUT_KEPT))), ensure_ascii=False,
                                 separators=(",", ":"))
            if len(payload.encode()) <= MAX_GRADE_BYTES:
                rows.append((key, kind, now, payload))

        def write(conn: sqlite3.Connection) -> object:
            self._schema(conn)
            with conn:
                conn.executemany("INSERT OR REPLACE INTO grades VALUES (?,?,?,?)", rows)
                conn.execute("DELETE FROM grades WHERE rowid IN (SELECT rowid FROM grades "
                             "ORDER BY saved_at DESC LIMIT -1 OFFSET ?)", (MAX_GRADES,))
            return True

        if rows:
            self._use(write, False, "grades not kept")
