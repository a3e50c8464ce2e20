"""EvidenceStore: one SQLite database of evidence in the user's state directory.

Why SQLite in WAL mode: a background sweep writes while the app and other
reviewui processes read, and a reader never waits for a writer. Why so
suspicious on open: the file sits in a directory anything of the user's can
write, so a database that is not reviewui's (another application id), or that
SQLite finds corrupt, is renamed aside with one line and a new one started;
nothing in it is ever trusted. A row that does not decode as the record it
claims to be is treated as absent.

Strings in the store come from the repository (test ids, messages, output):
they are stored as they are and drawn terminal-safe by whoever shows them.
What is stored is bounded: each payload, and the number of rows kept.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence, TypeVar

from reviewui.core.findings.model import Finding
from reviewui.core.store.codec import CodecError, decode, encode
from reviewui.core.store.key import StoreKey, Stored

if TYPE_CHECKING:
    from reviewui.core.store.grades import GradeStore
    from reviewui.core.bite.report import BiteReport
    from reviewui.core.bite.truth_table import TruthTable

log = logging.getLogger(__name__)
T = TypeVar("T")

FILENAME = "evidence.sqlite"
APPLICATION_ID = 0x72755549
"""`PRAGMA application_id` of reviewui's store ("ruUI"): any other id is a foreign database."""
SCHEMA_VERSION = 1
MAX_PAYLOAD = 8 * 1024 * 1024
"""Bytes of JSON one stored record may take; a larger one is not stored (and never read)."""
MAX_ROWS = 5000
"""Rows kept; the oldest go first when a save passes this."""
BUSY_MS = 10_000
"""How long a write waits for another process's write to finish."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS evidence (
    key TEXT NOT NULL,
    kind TEXT NOT NULL,
    repo TEXT NOT NULL,
    branch TEXT NOT NULL,
    head TEXT NOT NULL,
    key_json TEXT NOT NULL,
    saved_at REAL NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (key, kind)
);
CREATE INDEX IF NOT EXISTS evidence_branch ON evidence (repo, branch, kind, saved_at);
CREATE INDEX IF NOT EXISTS evidence_head ON evidence (head, kind, saved_at);
"""


@dataclass(frozen=True)
class StoredFindings:
    """The findings a sweep produced, as one stored record."""

    findings: tuple[Finding, ...]
    """In the order they were computed (sorted)."""


class StoreUnusable(Exception):
    """The database file cannot be used as reviewui's store (foreign or corrupt)."""


def default_path() -> Path:
    """Where the user's evidence store lives (the XDG state directory)."""
    from reviewui.core.config import user_state_dir

    return user_state_dir() / FILENAME


class EvidenceStore:
    """Evidence records by StoreKey and kind (see the module docstring). Thread-safe."""

    def __init__(self, conn: sqlite3.Connection | None, path: Path, notice: str | None = None) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self.path = path
        """The database file."""
        self.notice = notice
        """One line for the user when the store was set aside or cannot be used, else None."""

    @classmethod
    def open(cls, path: Path | None = None) -> EvidenceStore:
        """Open (or create) the store at `path` (default: the state directory's).

        A foreign or corrupt database is renamed aside (`.set-aside-<time>`)
        and a new one started; `notice` says so in one line. A store that
        cannot be opened at all (unwritable directory) works as an empty one
        that keeps nothing, with its `notice` saying why. Never raises for the file's content.
        """
        path = path or default_path()
        try:
            return cls(_connect(path), path)
        except StoreUnusable as e:
            aside = _set_aside(path)
            notice = f"the evidence store {path} {e}: set aside as {aside.name}, starting a new one"
            log.warning("%s", notice)
            try:
                return cls(_connect(path), path, notice)
            except (StoreUnusable, sqlite3.Error, OSError) as again:
                return cls._disabled(path, f"cannot start a new one ({again})")
        except (sqlite3.Error, OSError) as e:
            return cls._disabled(path, str(e))

    @classmethod
    def _disabled(cls, path: Path, why: str) -> EvidenceStore:
        notice = f"the evidence store {path} cannot be used ({why}): evidence is not kept"
        log.warning("%s", notice)
        return cls(None, path, notice)

    def close(self) -> None:
        """Close the database (later calls keep and find nothing)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

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
        with self._lock:
            if self._conn is None:
                return False
            try:
                with self._conn:
                    self._conn.execute("INSERT OR REPLACE INTO evidence VALUES (?,?,?,?,?,?,?,?)", row)
                    self._conn.execute(
                        "DELETE FROM evidence WHERE rowid IN (SELECT rowid FROM evidence "
                        "ORDER BY saved_at DESC LIMIT -1 OFFSET ?)", (MAX_ROWS,))
            except sqlite3.Error as e:
                log.warning("evidence not stored (%s)", e)
                return False
        return True

    # --- reading ---------------------------------------------------------------

    def load(self, key: StoreKey, kind: str, cls: type[T]) -> Stored[T] | None:
        """The `kind` evidence stored under exactly `key` (current), or None."""
        rows = self._select("key = ? AND kind = ?", (key.digest, kind), 1)
        return next((s for s in (self._decode(r, cls, key) for r in rows) if s is not None), None)

    def latest_for(self, key: StoreKey, kind: str, cls: type[T]) -> Stored[T] | None:
        """The newest `kind` evidence of `key`'s branch (or, failing that, of its head), whatever it was
        computed from; its `changed` says what differs from `key` (empty: it is current)."""
        exact = self.load(key, kind, cls)
        if exact is not None:
            return exact
        for where, params in (("repo = ? AND branch = ? AND kind = ?", (key.repo, key.branch, kind)),
                              ("head = ? AND kind = ?", (key.head, kind))):
            for row in self._select(where, params, 5):
                stored = self._decode(row, cls, key)
                if stored is not None:
                    return stored
        return None

    def newest(self, kind: str, cls: type[T], *, repo: str, branch: str | None = None,
               head: str | None = None) -> Stored[T] | None:
        """The newest `kind` evidence of `repo`'s `branch` (or of `head`), for readers without a session
        (the review queue): its `key` says what it was computed from, for the reader to compare."""
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

    def _select(self, where: str, params: tuple[object, ...], limit: int) -> list[tuple[str, float, str]]:
        with self._lock:
            if self._conn is None:
                return []
            try:
                cur = self._conn.execute(
                    f"SELECT key_json, saved_at, payload FROM evidence WHERE {where} "  # noqa: S608 - fixed clauses
                    "AND length(CAST(payload AS BLOB)) <= ? ORDER BY saved_at DESC LIMIT ?",
                    (*params, MAX_PAYLOAD, limit))
                return [(str(a), float(b), str(c)) for a, b, c in cur.fetchall()]
            except (sqlite3.Error, TypeError, ValueError) as e:
                log.warning("evidence store not readable (%s)", e)
                return []

    @staticmethod
    def _decode(row: tuple[str, float, str], cls: type[T], asked: StoreKey) -> Stored[T] | None:
        key_json, saved_at, payload = row
        try:
            key = decode(StoreKey, json.loads(key_json))
            value = decode(cls, json.loads(payload))
        except (CodecError, ValueError, RecursionError) as e:
            log.debug("stored %s ignored: %s", cls.__name__, e)
            return None
        return Stored(value, key, saved_at, asked.changed_from(key))


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

    def _use(self, fn: Callable[[sqlite3.Connection], T], default: T, what: str) -> T:
        """`fn(connection)` under the store's lock; `default` when the store is unusable or SQLite fails."""
        with self._lock:
            if self._conn is None:
                return default
            try:
                return fn(self._conn)
            except sqlite3.Error as e:
                log.warning("%s (%s)", what, e)
                return default


def _connect(path: Path) -> sqlite3.Connection:
    """Open the database at `path` as reviewui's store, or raise StoreUnusable saying why."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fresh = not path.exists() or path.stat().st_size == 0
    if not fresh:
        with open(path, "rb") as f:
            if f.read(16) != b"SQLite format 3\x00":
                raise StoreUnusable("is not an SQLite database")
    else:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    conn = sqlite3.connect(path, timeout=BUSY_MS / 1000, check_same_thread=False, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app_id != APPLICATION_ID and not (app_id == 0 and tables == 0):
            raise StoreUnusable("is not reviewui's (another application's database)")
        check = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        if check != "ok":
            raise StoreUnusable(f"is corrupt ({check})")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if tables and version != SCHEMA_VERSION:
            raise StoreUnusable(f"has schema {version}, not {SCHEMA_VERSION}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        if not tables:
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.executescript(_SCHEMA)
        conn.isolation_level = "DEFERRED"  # transactions from here: `with conn` commits or rolls back
        return conn
    except sqlite3.DatabaseError as e:
        conn.close()
        raise StoreUnusable(f"is corrupt ({e})") from e
    except BaseException:
        conn.close()
        raise


def _set_aside(path: Path) -> Path:
    """Rename the database (and its WAL files) out of the way; the new name."""
    aside = path.with_name(f"{path.name}.set-aside-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(path) + suffix)
        if src.exists():
            os.replace(src, Path(str(aside) + suffix))
    return aside


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

