"""The evidence store's one SQLite connection per database per process, and when a database is set aside.

Why one connection, and no other descriptor of the file: SQLite's WAL relies
on POSIX advisory locks, which belong to the process and the file, not to a
descriptor. Closing *any* descriptor of the database file drops every lock
the process holds on it, so another process may then checkpoint and delete
the WAL under this process's connections (seen as `disk I/O error`, then a
good store called corrupt and thrown away). So the process opens each
database once (the registry below, shared by every EvidenceStore of it), the
file is created, when absent, before any connection exists, and its header
is never read by Python: SQLite itself refuses a file that is no database.

What sets a database aside (renamed `.set-aside-<time>`, a new one started,
one line said): only SQLite's own verdict that it is corrupt or not a
database (SQLITE_CORRUPT, SQLITE_NOTADB, a failed quick_check), another
application's database, another schema, or a file (or WAL) that is not the
user's alone (core/private.py). An I/O, busy, locked or full error is no verdict
on the file: it is retried, and if it persists the store "cannot be used
now" (said once) and tries again later; nothing is thrown away. A state
directory that is not the user's alone is refused outright.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

from reviewui.core.private import not_private, private_dir

log = logging.getLogger(__name__)
T = TypeVar("T")

APPLICATION_ID = 0x72755549
"""`PRAGMA application_id` of reviewui's store ("ruUI"): any other id is a foreign database."""
SCHEMA_VERSION = 1
BUSY_MS = 10_000
"""How long a statement waits for another process's write to finish."""
RETRIES = (0.05, 0.2, 0.5)
"""Pauses between tries of an operation that failed for a passing reason (I/O, busy, locked)."""
CORRUPT = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
"""SQLite's result codes that are a verdict on the file itself."""

SCHEMA = """
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
CREATE INDEX IF NOT EXISTS evidence_saved ON evidence (saved_at);
"""


class StoreUnusable(Exception):
    """The database file cannot be used as reviewui's store (corrupt, foreign, not the user's): set it aside."""


class StoreRefused(Exception):
    """The store's directory is not the user's alone: nothing is kept there."""


class StoreNotNow(Exception):
    """The database cannot be used now (I/O, busy, locked, full): nothing is wrong with the file itself."""


def is_corrupt(e: sqlite3.Error) -> bool:
    """True for SQLite's verdict that the file is corrupt or not a database (never I/O, busy or locked)."""
    code = getattr(e, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in CORRUPT


@dataclass
class Shared:
    """The process's one connection to one database, and the lock every use of it takes."""

    conn: sqlite3.Connection
    path: Path
    inode: int
    lock: threading.RLock = field(default_factory=threading.RLock)
    users: int = 1


_registry: dict[str, Shared] = {}
_registry_lock = threading.Lock()


def acquire(path: Path) -> Shared:
    """The process's connection to the store at `path`, opened (and checked) on first use.

    Raises StoreRefused (the directory is not private), StoreUnusable (set
    the file aside), or StoreNotNow (a passing error, after retries).
    """
    why = private_dir(path.parent)
    if why is not None:
        raise StoreRefused(f"directory {path.parent} {why}")
    with _registry_lock:
        key = os.path.realpath(path)
        shared = _registry.get(key)
        if shared is not None and _inode(path) == shared.inode:
            shared.users += 1
            return shared
        for suffix in ("", "-wal", "-shm"):
            problem = not_private(Path(str(path) + suffix))
            if problem:
                raise StoreUnusable(f"{'file' if not suffix else suffix[1:].upper()} {problem}")
        shared = retried(lambda: _open(path))
        _registry[key] = shared
        return shared


def release(shared: Shared) -> None:
    """One user of `shared` is done; the last one closes the connection."""
    with _registry_lock:
        shared.users -= 1
        if shared.users > 0:
            return
        key = os.path.realpath(shared.path)
        if _registry.get(key) is shared:
            del _registry[key]
    with shared.lock:
        shared.conn.close()


def forget(shared: Shared) -> None:
    """Stop handing out `shared` (its file was found corrupt): the next acquire opens and checks afresh."""
    with _registry_lock:
        key = os.path.realpath(shared.path)
        if _registry.get(key) is shared:
            del _registry[key]


def _inode(path: Path) -> int:
    try:
        return os.stat(path).st_ino
    except OSError:
        return -1


def retried(fn: Callable[[], T]) -> T:
    """`fn()`, tried again after a passing error (StoreNotNow) with short pauses; the last one is raised."""
    for pause in RETRIES:
        try:
            return fn()
        except StoreNotNow:
            time.sleep(pause)
    return fn()


def _open(path: Path) -> Shared:
    """Open and check the database at `path` (see the module docstring)."""
    if not os.path.lexists(path):
        try:
            # Made here, before this process has any connection to it: closing this
            # descriptor can drop no lock. SQLite gives the WAL the file's own mode.
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600))
        except FileExistsError:
            pass
        except OSError as e:
            raise StoreNotNow(f"cannot be made ({e.strerror or e})") from e
    try:
        conn = sqlite3.connect(path, timeout=BUSY_MS / 1000, check_same_thread=False, isolation_level=None)
    except sqlite3.Error as e:
        raise (StoreUnusable(f"is corrupt ({e})") if is_corrupt(e) else StoreNotNow(str(e))) from e
    try:
        _check_and_prepare(conn)
    except sqlite3.Error as e:
        conn.close()
        raise (StoreUnusable(f"is corrupt ({e})") if is_corrupt(e) else StoreNotNow(str(e))) from e
    except BaseException:
        conn.close()
        raise
    return Shared(conn, path, _inode(path))


def _check_and_prepare(conn: sqlite3.Connection) -> None:
    """Refuse a database that is not reviewui's (StoreUnusable); make the schema on a new one."""
    conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]  # SQLite reads the header: NOTADB here
    tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if app_id != APPLICATION_ID and not (app_id == 0 and tables == 0):
        raise StoreUnusable("is not reviewui's (another application's database)")
    check = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
    if check != "ok":
        raise StoreUnusable(f"is corrupt ({' '.join(str(check).split())[:200]})")  # one line
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if tables and version != SCHEMA_VERSION:
        raise StoreUnusable(f"has schema {version}, not {SCHEMA_VERSION}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    if not tables:
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    conn.executescript(SCHEMA)
    conn.isolation_level = "DEFERRED"  # transactions from here: `with conn` commits or rolls back


def set_aside(path: Path) -> Path:
    """Rename the database (and its WAL files) out of the way; the new name."""
    aside = path.with_name(f"{path.name}.set-aside-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(path) + suffix)
        if os.path.lexists(src):
            os.replace(src, Path(str(aside) + suffix))
    return aside
