"""EvidenceStore: one SQLite database of evidence in the user's state directory.

Why SQLite in WAL mode: a background sweep writes while the app and other
reviewui processes read, and a reader never waits for a writer. Why so
suspicious on open: a database that is not reviewui's (another application
id), that SQLite finds corrupt, or that is not the user's alone is set aside
with one line and a new one started; a state directory another user owns or
can write is refused; nothing in either is ever trusted (connection.py says
when, and why each process keeps one connection per database). A row that
does not decode as the record it claims to be is treated as absent.

Strings in the store come from the repository (test ids, messages, output):
they are stored as they are and drawn terminal-safe by whoever shows them.
What is stored is bounded: each payload, and the number of rows kept
(MAX_ROWS, sized for the queue's branch cap; the oldest go first, found by
an index on `saved_at`).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, TypeVar

from reviewui.core.findings.model import Finding
import reviewui.core.store.connection as connection
from reviewui.core.store.codec import CodecError, decode, encode
from reviewui.core.store.connection import Shared, StoreNotNow, StoreRefused, StoreUnusable, is_corrupt
from reviewui.core.store.key import StoreKey, Stored

if TYPE_CHECKING:
    from reviewui.core.store.grades import GradeStore
    from reviewui.core.bite.report import BiteReport
    from reviewui.core.bite.truth_table import TruthTable

log = logging.getLogger(__name__)
T = TypeVar("T")

FILENAME = "evidence.sqlite"
MAX_PAYLOAD = 8 * 1024 * 1024
"""Bytes of JSON one stored record may take; a larger one is not stored (and never read)."""
ROWS_PER_SWEEP = 4
"""Rows one queued branch's sweep saves: the sweep, its truth table, its findings and its summary."""
BRANCHES_KEPT = 10_000
"""Branches whose latest sweep the store keeps (the queue lists at least this many)."""
MAX_ROWS = ROWS_PER_SWEEP * BRANCHES_KEPT
"""Rows kept; the oldest go first when a save passes this."""
RETRY_OPEN = 30.0
"""Seconds before a store that could not be used now is tried again."""
_CHUNK = 500
"""Keys asked of SQLite in one statement (its limit on bound parameters is 32766, older ones 999)."""

Row = tuple[str, float, str]
"""(key_json, saved_at, payload) of one stored record."""


@dataclass(frozen=True)
class StoredFindings:
    """The findings a sweep produced, as one stored record."""

    findings: tuple[Finding, ...]
    """In the order they were computed (sorted)."""


__all__ = ["EvidenceStore", "StoreUnusable", "StoredFindings", "default_path"]


def default_path() -> Path:
    """Where the user's evidence store lives (the XDG state directory)."""
    from reviewui.core.config import user_state_dir

    return user_state_dir() / FILENAME


class EvidenceStore:
    """Evidence records by StoreKey and kind (see the module docstring). Thread-safe."""

    def __init__(self, shared: Shared | None, path: Path, notice: str | None = None,
                 retry_at: float | None = None) -> None:
        self._shared = shared
        self._lock = threading.Lock()
        self._retry_at = retry_at
        self._said: set[str] = set()
        self.path = path
        """The database file."""
        self.notice = notice
        """One line for the user when the store was set aside or cannot be used, else None."""

    @classmethod
    def open(cls, path: Path | None = None) -> EvidenceStore:
        """Open (or create) the store at `path` (default: the state directory's).

        A foreign or corrupt database, or one that is not the user's alone, is
        renamed aside (`.set-aside-<time>`) and a new one started; `notice` says
        so in one line. A state directory that is not the user's alone is
        refused: the store keeps nothing, and `notice` says why. A passing
        error (I/O, busy, locked) leaves the file be: the store is empty for now
        and tried again later. Never raises for the file's content.
        """
        path = path or default_path()
        try:
            return cls(connection.acquire(path), path)
        except StoreRefused as e:
            return cls._disabled(path, f"the evidence store's {e}: evidence is not kept (make it yours alone)")
        except StoreNotNow as e:
            return cls._disabled(path, f"the evidence store {path} cannot be used now ({e}): evidence is not kept "
                                       "until it can", retry=True)
        except StoreUnusable as e:
            try:
                aside = connection.set_aside(path)
            except OSError as again:
                return cls._disabled(path, f"the evidence store {path} {e}, and cannot be set aside ({again}): "
                                           "evidence is not kept")
            notice = f"the evidence store {path} {e}: set aside as {aside.name}, starting a new one"
            log.warning("%s", notice)
            try:
                return cls(connection.acquire(path), path, notice)
            except (StoreUnusable, StoreRefused, StoreNotNow, OSError) as again:
                return cls._disabled(path, f"the evidence store {path} cannot start a new one ({again}): "
                                           "evidence is not kept")

    @classmethod
    def _disabled(cls, path: Path, notice: str, retry: bool = False) -> EvidenceStore:
        log.warning("%s", notice)
        return cls(None, path, notice, time.monotonic() + RETRY_OPEN if retry else None)

    def close(self) -> None:
        """Let go of the database (later calls keep and find nothing)."""
        with self._lock:
            shared, self._shared, self._retry_at = self._shared, None, None
        if shared is not None:
            connection.release(shared)

    def _connection(self) -> Shared | None:
        with self._lock:
            if self._shared is None and self._retry_at is not None and time.monotonic() >= self._retry_at:
                try:
                    self._shared = connection.acquire(self.path)
                    self._retry_at = None
                except (StoreNotNow, StoreRefused, StoreUnusable, OSError):
                    self._retry_at = time.monotonic() + RETRY_OPEN
            return self._shared

    def _use(self, fn: Callable[[sqlite3.Connection], T], default: T, what: str) -> T:
        """`fn(connection)` under the process's lock for it; a passing error is retried, then said once."""
        shared = self._connection()
        if shared is None:
            return default
        for pause in (*connection.RETRIES, None):
            try:
                with shared.lock:
                    return fn(shared.conn)
            except sqlite3.Error as e:
                if is_corrupt(e):
                    # The next open checks the file again and sets it aside; this process stops using it.
                    self._say(f"the evidence store {self.path} is corrupt ({e}): evidence is not kept")
                    self.close()
                    connection.forget(shared)
                    return default
                if pause is None:
                    self._say(f"the evidence store {self.path} cannot be used now ({e}): {what}")
                    return default
                time.sleep(pause)
        return default  # pragma: no cover - the loop returns

    def _say(self, line: str) -> None:
        if line not in self._said:
            self._said.add(line)
            log.warning("%s", line)

    # --- writing ---------------------------------------------------------------

    def save(self, key: StoreKey, kind: str, value: object, *, now: float | None = None) -> bool:
        """Store `value` (a frozen dataclass) as the `kind` evidence of `key`, replacing an earlier one.

        Returns False when it was not stored: too large, or the store is unusable.
        """
        payload = json.dumps(encode(value), ensure_ascii=False, separators=(",", ":"))
        if len(payload.encode()) > MAX_PAYLOAD:
            log.warning("%s evidence of %s not stored: larger than %d bytes", kind, key.head[:10], MAX_PAYLOAD)
            return False
        row = (key.digest, kind, key.repo, key.branch, key.head, json.dumps(encode(key)),
               time.time() if now is None else now, payload)

        def write(conn: sqlite3.Connection) -> bool:
            with conn:
                conn.execute("INSERT OR REPLACE INTO evidence VALUES (?,?,?,?,?,?,?,?)", row)
                # The MAX_ROWS-th newest, found by walking the saved_at index: older ones go.
                cut = conn.execute("SELECT saved_at FROM evidence ORDER BY saved_at DESC LIMIT 1 OFFSET ?",
                                   (MAX_ROWS,)).fetchone()
                if cut is not None:
                    conn.execute("DELETE FROM evidence WHERE saved_at <= ?", (cut[0],))
            return True

        return self._use(write, False, "evidence not stored")

    # --- reading ---------------------------------------------------------------

    def load(self, key: StoreKey, kind: str, cls: type[T]) -> Stored[T] | None:
        """The `kind` evidence stored under exactly `key` (current), or None."""
        rows = self._select("key = ? AND kind = ?", (key.digest, kind), 1)
        return next((s for s in (self._decode(r, cls, key) for r in rows) if s is not None), None)

    def latest_for(self, key: StoreKey, kind: str, cls: type[T]) -> Stored[T] | None:
        """The newest `kind` evidence of `key`'s branch (or, failing that, of its head), whatever it was
        computed from; its `changed` says what differs from `key` (empty: it is current)."""
        return self.latest_for_many([key], kind, cls).get(key.digest)

    def latest_for_many(self, keys: Iterable[StoreKey], kind: str, cls: type[T]) -> dict[str, Stored[T]]:
        """`latest_for` of each key, by key digest, in a few statements: the one rule deciding which stored
        evidence a review (and each row of the queue) is shown, and whether it is current."""
        wanted = {k.digest: k for k in keys}
        found: dict[str, Stored[T]] = {}
        for chunk in _chunks(list(wanted), _CHUNK):
            marks = ",".join("?" * len(chunk))
            for row in self._select_rows(f"SELECT key, key_json, saved_at, payload FROM evidence WHERE kind = ? "  # noqa: S608
                                         f"AND key IN ({marks})", (kind, *chunk)):
                stored = self._decode(row[1:], cls, wanted[row[0]])
                if stored is not None:
                    found[row[0]] = stored
        for column, of in (("branch", lambda k: (k.repo, k.branch)), ("head", lambda k: (k.head,))):
            left = [k for d, k in wanted.items() if d not in found]
            if not left:
                break
            stored_groups = self._groups(column, kind, {k.repo for k in left})
            left = [k for k in left if of(k) in stored_groups]  # most rows have nothing stored at all
            if not left:
                continue
            newest = self._newest_by(column, {of(k) for k in left}, kind)
            for k in left:
                candidates = newest.get(of(k), [])
                stored = next((s for s in (self._decode(r, cls, k) for r in candidates) if s is not None), None)
                if stored is not None:
                    found[k.digest] = stored
        return found

    def _groups(self, column: str, kind: str, repos: set[str]) -> set[tuple[str, ...]]:
        """The (repo, branch) or (head,) groups that hold any `kind` row (read from an index alone)."""
        if column == "branch":
            out: set[tuple[str, ...]] = set()
            for repo in repos:
                out |= {(str(repo), str(b)) for (b,) in self._select_rows(
                    "SELECT DISTINCT branch FROM evidence WHERE repo = ? AND kind = ?", (repo, kind))}
            return out
        return {(str(h),) for (h,) in self._select_rows("SELECT DISTINCT head FROM evidence WHERE kind = ?",
                                                         (kind,))}

    def _newest_by(self, column: str, groups: set[tuple[str, ...]], kind: str) -> dict[tuple[str, ...], list[Row]]:
        """Up to 5 newest rows of each (repo, branch) or (head,) group, newest first."""
        out: dict[tuple[str, ...], list[Row]] = {}
        if column == "branch":
            by_repo: dict[str, list[str]] = {}
            for repo, branch in groups:
                by_repo.setdefault(repo, []).append(branch)
            asks: list[tuple[str, tuple[str, ...], list[str]]] = [
                ("repo = ? AND branch IN ({})", (repo,), branches) for repo, branches in by_repo.items()]
        else:
            asks = [("head IN ({})", (), [h for (h,) in groups])]
        for where, fixed, values in asks:
            for chunk in _chunks(values, _CHUNK):
                sql = (f"SELECT repo, branch, head, key_json, saved_at, payload FROM (SELECT *, row_number() OVER "  # noqa: S608
                       f"(PARTITION BY {'repo, branch' if column == 'branch' else 'head'} ORDER BY saved_at DESC) "
                       f"AS n FROM evidence WHERE kind = ? AND {where.format(','.join('?' * len(chunk)))} AND "
                       f"length(CAST(payload AS BLOB)) <= ?) WHERE n <= 5 ORDER BY saved_at DESC")
                for repo, branch, head, *row in self._select_rows(sql, (kind, *fixed, *chunk, MAX_PAYLOAD)):
                    group: tuple[str, ...] = (repo, branch) if column == "branch" else (head,)
                    out.setdefault(group, []).append((str(row[0]), float(row[1]), str(row[2])))
        return out

    def newest(self, kind: str, cls: type[T], *, repo: str, branch: str | None = None,
               head: str | None = None) -> Stored[T] | None:
        """The newest `kind` evidence of `repo`'s `branch` (or of `head`), for readers without a session:
        its `key` says what it was computed from, for the reader to compare."""
        where, params = (("repo = ? AND branch = ? AND kind = ?", (repo, branch, kind)) if branch is not None
                         else ("head = ? AND kind = ?", (head or "", kind)))
        for row in self._select(where, params, 5):
            try:
                key = decode(StoreKey, json.loads(row[0]))
            except (CodecError, ValueError, RecursionError):
                continue
            stored = self._decode(row, cls, key)
            if stored is not None:
                return stored
        return None

    def _select(self, where: str, params: tuple[object, ...], limit: int) -> list[Row]:
        rows = self._select_rows(
            f"SELECT key_json, saved_at, payload FROM evidence WHERE {where} "  # noqa: S608 - fixed clauses
            "AND length(CAST(payload AS BLOB)) <= ? ORDER BY saved_at DESC LIMIT ?", (*params, MAX_PAYLOAD, limit))
        return [(str(a), float(b), str(c)) for a, b, c in rows]

    def _select_rows(self, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        def read(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            try:
                return list(conn.execute(sql, params).fetchall())
            except (TypeError, ValueError) as e:
                log.warning("evidence store not readable (%s)", e)
                return []

        return self._use(read, [], "nothing read from it")

    @staticmethod
    def _decode(row: Sequence[object], cls: type[T], asked: StoreKey) -> Stored[T] | None:
        key_json, saved_at, payload = row
        try:
            key = decode(StoreKey, json.loads(str(key_json)))
            value = decode(cls, json.loads(str(payload)))
        except (CodecError, ValueError, RecursionError, TypeError) as e:
            log.debug("stored %s ignored: %s", cls.__name__, e)
            return None
        when = float(saved_at) if isinstance(saved_at, (int, float)) else 0.0
        return Stored(value, key, when, asked.changed_from(key))

    # --- the typed records ----------------------------------------------------

    def save_bite(self, key: StoreKey, report: BiteReport) -> bool:
        """Store a finished sweep (its outputs capped); False when it was not stored."""
        return self.save(key, "bite", slim_report(report))

    def load_bite(self, key: StoreKey) -> Stored[BiteReport] | None:
        """The sweep stored under exactly `key`, or None."""
        from reviewui.core.bite.report import BiteReport

        return self.load(key, "bite", BiteReport)

    def latest_bite(self, key: StoreKey) -> Stored[BiteReport] | None:
        """The newest sweep of `key`'s branch or head, current or stale (see EvidenceStore.latest_for)."""
        from reviewui.core.bite.report import BiteReport

        return self.latest_for(key, "bite", BiteReport)

    def save_findings(self, key: StoreKey, findings: Sequence[Finding]) -> bool:
        """Store the findings a sweep produced; False when they were not stored."""
        return self.save(key, "findings", StoredFindings(tuple(findings)))

    def load_findings(self, key: StoreKey) -> Stored[StoredFindings] | None:
        """The findings stored under exactly `key`, or None."""
        return self.load(key, "findings", StoredFindings)

    def save_table(self, key: StoreKey, table: TruthTable) -> bool:
        """Store a per-test truth table; False when it was not stored."""
        return self.save(key, "tests", table)

    def load_table(self, key: StoreKey) -> Stored[TruthTable] | None:
        """The truth table stored under exactly `key`, or None."""
        from reviewui.core.bite.truth_table import TruthTable

        return self.load(key, "tests", TruthTable)


    # --- per-hunk grades (grades.py) -----------------------------------------

    def grades(self, context: str, read: bool = True) -> GradeStore:
        """Each hunk's and guard's grade by its key (grades.py), for sweeps whose context digest is `context`;
        `read` False (`--fresh`): nothing is reused, what is graded is kept."""
        from reviewui.core.store.grades import GradeStore

        return GradeStore(self._use, context, read, cap_text)


def _chunks(items: list[str], n: int) -> Iterable[list[str]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


OUTPUT_KEPT = 16 * 1024
"""Characters of a run's captured output kept in the store (head and tail)."""


def cap_text(text: str, limit: int = OUTPUT_KEPT) -> str:
    """`text` whole when short, else its head and tail around one marker line."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… {len(text) - 2 * half} characters not kept …\n{text[-half:]}"


def slim_report(report: BiteReport) -> BiteReport:
    """`report` with every run's captured output capped (what the store keeps of it)."""
    from dataclasses import replace

    results = tuple(
        replace(r, output=cap_text(r.output), guards=tuple(replace(g, output=cap_text(g.output)) for g in r.guards))
        for r in report.results)
    baseline = replace(report.baseline, output=cap_text(report.baseline.output))
    return replace(report, baseline=baseline, results=results)

