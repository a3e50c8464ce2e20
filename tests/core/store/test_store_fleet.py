"""The evidence store under a fleet: a writer beside readers keeps every sweep; another user's directory or
file is never trusted; a passing error never throws the store away; pruning walks an index."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from reviewui.core.store import EvidenceStore
from reviewui.core.store import connection
from reviewui.core.store import db as store_db
from tests.core.store.test_evidence_store import KEY, report

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

WRITER = """
import sys, time
sys.path[:0] = [{root!r}, {here!r}]
from dataclasses import replace
from pathlib import Path
from test_evidence_store import KEY, report
from reviewui.core.store import EvidenceStore
path = Path({path!r})
stores = []
for n in range({n}):
    s = EvidenceStore.open(path)  # one store per branch's session, as `queue --sweep` opens them, none closed
    stores.append(s)
    assert s.notice is None, s.notice
    assert s.save_bite(replace(KEY, branch=f"agent/{{n}}", head=f"{{n:040x}}"), report("out " * 2000)), n
    time.sleep(0.01)
print("wrote", len(stores), flush=True)
"""

READER = """
import sys, time
sys.path[:0] = [{root!r}, {here!r}]
from pathlib import Path
from test_evidence_store import KEY
from reviewui.core.bite.report import BiteReport
from reviewui.core.store import EvidenceStore
path = Path({path!r})
reads = 0
deadline = time.monotonic() + {seconds}
while time.monotonic() < deadline and not Path({done!r}).exists():
    s = EvidenceStore.open(path)  # as each `queue --format json` opens it, reads and goes
    assert s.notice is None, s.notice
    s.newest("bite", BiteReport, repo=KEY.repo, branch="agent/1")
    s.close()
    reads += 1
print("read", reads, flush=True)
"""


def test_a_writer_beside_readers_keeps_every_sweep(tmp_path: Path) -> None:
    # Issue 44: the header check closed a descriptor of the database, dropping the process's locks; the
    # readers then checkpointed the WAL away under the writer, which called its store corrupt and set it aside.
    path = tmp_path / "state" / "evidence.sqlite"
    EvidenceStore.open(path).close()
    done = tmp_path / "done"
    n = 60
    fmt = {"root": str(ROOT), "here": str(HERE), "path": str(path), "done": str(done)}
    readers = [subprocess.Popen([sys.executable, "-c", READER.format(seconds=120, **fmt)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(3)]
    writer = subprocess.run([sys.executable, "-c", WRITER.format(n=n, **fmt)], capture_output=True, text=True,
                            timeout=300)
    done.write_text("")
    outs = [r.communicate(timeout=120) for r in readers]
    assert writer.returncode == 0, writer.stderr[-2000:]
    assert all(r.returncode == 0 for r in readers), [err[-2000:] for _, err in outs]
    assert not [p.name for p in path.parent.iterdir() if ".set-aside-" in p.name]
    store = EvidenceStore.open(path)
    assert store.notice is None
    kept = [store.load_bite(replace(KEY, branch=f"agent/{i}", head=f"{i:040x}")) for i in range(n)]
    assert all(k is not None and k.value == report("out " * 2000) for k in kept)


def test_one_connection_per_database_per_process(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    a, b = EvidenceStore.open(path), EvidenceStore.open(path)
    assert a._shared is not None and a._shared is b._shared
    a.close()
    assert b.save_bite(KEY, report()) and b.load_bite(KEY) is not None  # the other user of it goes on
    b.close()
    assert str(path) not in {str(s.path) for s in connection._registry.values()}


def _store_in(directory: Path) -> EvidenceStore:
    return EvidenceStore.open(directory / "evidence.sqlite")


def test_a_world_writable_state_dir_is_refused_and_a_666_database_set_aside(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    store = _store_in(shared)
    assert store.notice is not None and "\n" not in store.notice and "writable by" in store.notice
    assert "not kept" in store.notice
    assert not store.save_bite(KEY, report()) and store.load_bite(KEY) is None
    assert not (shared / "evidence.sqlite").exists()
    # control: the same directory made private is used
    os.chmod(shared, 0o700)
    assert _store_in(shared).notice is None
    # a database file anyone may write is set aside, never read
    mine = tmp_path / "mine"
    good = EvidenceStore.open(mine / "evidence.sqlite")
    assert good.save_bite(KEY, report())
    good.close()
    os.chmod(mine / "evidence.sqlite", 0o666)
    store = _store_in(mine)
    assert store.notice is not None and "set aside" in store.notice and "writable by" in store.notice
    assert store.load_bite(KEY) is None


def _as_other_user() -> bool:
    return os.geteuid() == 0 and subprocess.run(["id", "-u", "reviewui-ci"], capture_output=True).returncode == 0


def _python_they_can_run() -> str:
    """This interpreter when reviewui-ci may run it, else the system's (the store needs only the stdlib)."""
    import shutil

    for python in (sys.executable, shutil.which("python3", path="/usr/bin:/bin") or ""):
        if python and subprocess.run(["runuser", "-u", "reviewui-ci", "--", python, "-c", "pass"],
                                     capture_output=True, cwd="/").returncode == 0:
            return python
    raise AssertionError("no Python reviewui-ci can run")


def test_a_state_dir_another_user_made_first_is_refused(tmp_path: Path) -> None:
    """Issue 38: another local user makes the state directory first (mode 1777, their empty database mode 666)
    and later rewrites `toothless` to `bites`; reviewui must never keep or read evidence there."""
    if not _as_other_user():
        # As an ordinary user: a directory root owns stands for another user's.
        store = EvidenceStore.open(Path("/") / "evidence.sqlite")
        assert store.notice is not None and "owned by uid 0" in store.notice
        return
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    (theirs / "evidence.sqlite").write_bytes(b"")
    os.chmod(theirs / "evidence.sqlite", 0o666)
    uid = int(subprocess.run(["id", "-u", "reviewui-ci"], capture_output=True, text=True, check=True).stdout)
    for p in (theirs, theirs / "evidence.sqlite"):
        os.chown(p, uid, uid)
    store = _store_in(theirs)  # owner only differs (mode 0700): the owner check alone refuses it
    assert store.notice is not None and f"owned by uid {uid}" in store.notice and "\n" not in store.notice
    assert not store.save_bite(KEY, report()) and store.load_bite(KEY) is None
    assert (theirs / "evidence.sqlite").read_bytes() == b""  # nothing written into their file
    # ... and the other way round: reviewui run as reviewui-ci refuses root's directory (made where they can
    # look: pytest's own temporary root is private to root)
    import shutil
    import tempfile

    outer = Path(tempfile.mkdtemp(prefix="reviewui-other-user-"))
    try:
        os.chmod(outer, 0o755)
        mine = outer / "roots"
        EvidenceStore.open(mine / "evidence.sqlite").close()
        os.chmod(mine, 0o755)
        code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from pathlib import Path; "
                "from reviewui.core.store import EvidenceStore; "
                f"print(EvidenceStore.open(Path({str(mine)!r}) / 'evidence.sqlite').notice)")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("COVERAGE", "PYTEST"))}
        proc = subprocess.run(["runuser", "-u", "reviewui-ci", "--", _python_they_can_run(), "-c", code],
                              capture_output=True, text=True, env={**env, "HOME": str(outer)}, timeout=60, cwd="/")
    finally:
        shutil.rmtree(outer, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr
    assert "owned by uid 0" in proc.stdout and "not kept" in proc.stdout


def _io_error() -> sqlite3.OperationalError:
    e = sqlite3.OperationalError("disk I/O error")
    e.sqlite_errorcode = sqlite3.SQLITE_IOERR  # type: ignore[attr-defined]
    return e


def test_a_passing_error_never_sets_the_store_aside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "e.sqlite"
    first = EvidenceStore.open(path)
    assert first.save_bite(KEY, report())
    first.close()
    real = connection._check_and_prepare
    failing = {"on": True}

    def flaky(conn: sqlite3.Connection) -> None:
        if failing["on"]:
            raise _io_error()
        real(conn)

    monkeypatch.setattr(connection, "_check_and_prepare", flaky)
    monkeypatch.setattr(connection, "RETRIES", (0.0, 0.0))
    monkeypatch.setattr(store_db, "RETRY_OPEN", 0.0)
    store = EvidenceStore.open(path)
    assert store.notice is not None and "cannot be used now" in store.notice and "disk I/O error" in store.notice
    assert not [p for p in tmp_path.iterdir() if ".set-aside-" in p.name]
    assert store.load_bite(KEY) is None  # nothing now ...
    failing["on"] = False
    got = store.load_bite(KEY)  # ... and the kept sweep once the error passes
    assert got is not None and got.value == report()
    # a corrupt verdict from SQLite does set it aside
    corrupt = sqlite3.DatabaseError("database disk image is malformed")
    corrupt.sqlite_errorcode = sqlite3.SQLITE_CORRUPT  # type: ignore[attr-defined]
    assert connection.is_corrupt(corrupt) and not connection.is_corrupt(_io_error())


def test_pruning_walks_the_saved_at_index_and_the_cap_holds_the_queues_branches(tmp_path: Path) -> None:
    from reviewui.core.queue.read import MAX_BRANCHES

    assert store_db.MAX_ROWS >= store_db.ROWS_PER_SWEEP * MAX_BRANCHES >= 4 * 10_000
    store = EvidenceStore.open(tmp_path / "e.sqlite")
    store.save_bite(KEY, report())
    conn = sqlite3.connect(tmp_path / "e.sqlite")
    plan = " ".join(str(r[-1]) for r in conn.execute(
        "EXPLAIN QUERY PLAN SELECT saved_at FROM evidence ORDER BY saved_at DESC LIMIT 1 OFFSET 5"))
    assert "USING COVERING INDEX evidence_saved" in plan, plan


def test_provenance_is_neither_read_nor_written_in_a_state_dir_others_can_write(tmp_path: Path) -> None:
    from reviewui.core.config import user_state_dir
    from reviewui.core.notes import provenance
    from tests.core.test_notes import new
    from tests.gitrepo import make_repo

    make_repo(tmp_path / "r", {"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    repo = tmp_path / "r"
    base = subprocess.run(["git", "rev-parse", "main"], cwd=repo, capture_output=True, text=True).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "agent/work"], cwd=repo, capture_output=True, text=True).stdout.strip()
    r = new(repo, base, head, "approve", "ok")
    provenance.remember(repo, [r], provenance.RECORDED)
    assert provenance.load(repo) == {provenance.key(r): provenance.RECORDED}  # control: private, read
    os.chmod(user_state_dir(), 0o777)
    assert provenance.load(repo) == {}  # another user could have written `recorded here`
    provenance.remember(repo, [replace(r, id="other")], provenance.RECORDED)
    os.chmod(user_state_dir(), 0o700)
    assert provenance.key(replace(r, id="other")) not in provenance.load(repo)
