"""The evidence store: exact round trips, restarts, staleness, a corrupt or foreign file, WAL readers."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest

from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.report import Baseline, BiteReport, HunkResult
from reviewui.core.bite.truth_table import Bite, TestRow, TruthTable
from reviewui.core.findings.model import finding
from reviewui.core.store import EvidenceStore, StoreKey, StoredFindings
from reviewui.core.store import db as store_db

KEY = StoreKey(repo="/r", branch="agent/x", head="a" * 40, base="b" * 40, test_command="python -m pytest",
               config="c1", environment="e1", version="0.1.0")


def report(output: str = "ok\n") -> BiteReport:
    guard = GuardResult("pkg/m.py", 0, 3, "condition", "`x < lo` made always true", "bites",
                        failing_tests=("tests/test_m.py::test_lo[case-1]",),
                        messages={"tests/test_m.py::test_lo[case-1]": "assert 1 == 0"}, seconds=0.125,
                        output=output, tests_run=("tests/test_m.py::test_lo[case-1]",), start=(3, 8), end=(3, 14),
                        replacement="True")
    hunk = HunkResult("pkg/m.py", 0, "@@ -1,2 +1,4 @@", "@@ -1,2 +1,4 @@\n+\x1b[31mred\u202e\n", "bites",
                      failing_tests=("tests/test_m.py::test_lo[case-1]",),
                      messages={"tests/test_m.py::test_lo[case-1]": "AssertionError: é"}, seconds=1 / 3,
                      output=output, tests_run=("tests/test_m.py",), guards=(guard,),
                      passed_tests=("tests/test_m.py::test_other",))
    skipped = HunkResult("pkg/n.py", 2, "@@ -9 +9 @@", "", "skipped", reason="cancelled")
    base = Baseline("green", seconds=0.5, output=output, tests=("tests/test_m.py::test_lo[case-1]",),
                    coverage_guided=True, messages={})
    return BiteReport(base, (hunk, skipped), ("tests/test_m.py",), "python -m pytest", guards_checked=True,
                      sandbox="bwrap", selection="1 test file changed")


def table() -> TruthTable:
    row = TestRow("tests/test_m.py::test_lo[case-1]", "tests/test_m.py", 4, "added", "passes", "errors",
                  "ImportError: cannot import name 'lo'", "", (Bite("pkg/m.py", 0), Bite("pkg/m.py", 0, 3, "condition")))
    return TruthTable("a" * 40, "b" * 40, "complete", tests=(row,), regressions=(replace(row, change="unchanged"),),
                      already_red=("tests/test_m.py::test_old",), base_seconds=0.25)


def test_every_record_round_trips_exactly(tmp_path: Path) -> None:
    store = EvidenceStore.open(tmp_path / "e.sqlite")
    found = (finding("toothless-hunk", "reverting \x1b]52;c;x\x07 leaves every test passing", file="pkg/m.py", line=2),
             finding("baseline-red", "red", evidence="a\nb"))
    assert store.save_bite(KEY, report()) and store.save_table(KEY, table()) and store.save_findings(KEY, found)
    bite, tab, fnd = store.load_bite(KEY), store.load_table(KEY), store.load_findings(KEY)
    assert bite is not None and bite.value == report() and bite.current
    assert bite.value.results[0].guards[0].start == (3, 8)  # a tuple, not a list
    assert isinstance(bite.value.results[0].failing_tests, tuple)
    assert bite.value.results[0].seconds == 1 / 3
    assert tab is not None and tab.value == table()
    assert fnd is not None and fnd.value == StoredFindings(found)


def test_a_new_process_reads_what_the_last_one_wrote(tmp_path: Path) -> None:
    path = tmp_path / "state" / "evidence.sqlite"
    writer = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_evidence_store import KEY, report
        from reviewui.core.store import EvidenceStore
        s = EvidenceStore.open(__import__('pathlib').Path({str(path)!r}))
        assert s.save_bite(KEY, report())
        s.close()
    """)
    subprocess.run([sys.executable, "-c", writer], check=True, timeout=60)
    got = EvidenceStore.open(path).load_bite(KEY)
    assert got is not None and got.value == report()
    assert got.age_words().endswith(", this head") and got.age_words().startswith("from ")


@pytest.mark.parametrize(("field", "value", "words"), [
    ("head", "f" * 40, "stale: head changed"),
    ("test_command", "python -m pytest -x", "stale: test command changed"),
    ("config", "c2", "stale: config changed"),
])
def test_a_changed_key_finds_nothing_current_and_the_old_one_stale(tmp_path: Path, field: str, value: str,
                                                                    words: str) -> None:
    store = EvidenceStore.open(tmp_path / "e.sqlite")
    store.save_bite(KEY, report())
    now = replace(KEY, **{field: value})
    assert store.load_bite(now) is None
    stale = store.latest_bite(now)
    assert stale is not None and not stale.current and stale.changed == (field,)
    assert stale.age_words().endswith(words)
    assert store.latest_bite(KEY) is not None and store.latest_bite(KEY).current  # type: ignore[union-attr]


def test_age_words_name_the_day_when_not_today(tmp_path: Path) -> None:
    store = EvidenceStore.open(tmp_path / "e.sqlite")
    store.save(KEY, "bite", report(), now=time.time() - 3 * 86400)
    got = store.load_bite(KEY)
    assert got is not None
    assert got.age_words().startswith("from " + time.strftime("%Y-%m-%d", time.localtime(got.saved_at)))


def _garbage(path: Path) -> None:
    path.write_bytes(b"\x00garbage, not a database" * 100)


def _foreign(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE evidence (key TEXT, kind TEXT, payload TEXT)")
    conn.execute("INSERT INTO evidence VALUES ('x', 'bite', '{}')")
    conn.commit()
    conn.close()


def _damaged(path: Path) -> None:
    writer = EvidenceStore.open(path)
    writer.save_bite(KEY, report("x" * 40000))
    writer.close()  # the process's one connection to it goes: the damage below is to a file no one here holds
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    data = bytearray(path.read_bytes())
    data[4096:12288] = b"\xff" * 8192  # every page after the header page smashed
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("spoil", [_garbage, _foreign, _damaged], ids=["garbage", "foreign", "damaged"])
def test_a_corrupt_or_foreign_database_is_set_aside_with_one_line(tmp_path: Path, spoil, caplog) -> None:
    path = tmp_path / "evidence.sqlite"
    spoil(path)
    caplog.set_level("WARNING")
    store = EvidenceStore.open(path)
    assert store.notice is not None and "\n" not in store.notice and "set aside as" in store.notice
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [store.notice]
    asides = [p for p in tmp_path.iterdir() if ".set-aside-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert len(asides) == 1
    assert store.load_bite(KEY) is None  # nothing of it trusted
    assert store.save_bite(KEY, report()) and store.load_bite(KEY) is not None  # a new one works
    assert EvidenceStore.open(path).notice is None  # and is reviewui's from now on


def test_a_row_that_does_not_decode_is_absent(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    store = EvidenceStore.open(path)
    store.save_bite(KEY, report())
    conn = sqlite3.connect(path)
    conn.execute("UPDATE evidence SET payload = ?", (json.dumps({"baseline": {"status": "purple"}}),))
    conn.commit()
    conn.close()
    assert store.load_bite(KEY) is None and store.latest_bite(KEY) is None


def test_what_is_stored_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = EvidenceStore.open(tmp_path / "e.sqlite")
    store.save_bite(KEY, report("y" * 1_000_000))
    got = store.load_bite(KEY)
    assert got is not None
    kept = got.value.results[0].output
    assert len(kept) < 20_000 and kept.startswith("yyy") and "characters not kept" in kept
    monkeypatch.setattr(store_db, "MAX_PAYLOAD", 1000)
    other = replace(KEY, head="9" * 40)
    assert not store.save_bite(other, report()) and store.load_bite(other) is None
    monkeypatch.setattr(store_db, "MAX_ROWS", 3)
    for n in range(5):
        store.save(replace(KEY, head=str(n) * 40), "tests", table(), now=1000.0 + n)
    conn = sqlite3.connect(tmp_path / "e.sqlite")
    assert conn.execute("SELECT count(*) FROM evidence").fetchone()[0] == 3


def test_readers_are_not_blocked_while_another_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    store = EvidenceStore.open(path)
    store.save_bite(KEY, report())
    # Another process opens a write transaction, writes a row and holds it open until told to go on.
    writer = textwrap.dedent(f"""
        import sqlite3, sys
        conn = sqlite3.connect({str(path)!r}, isolation_level=None)
        conn.execute("BEGIN EXCLUSIVE")  # in rollback-journal mode this would shut readers out
        conn.execute("UPDATE evidence SET saved_at = saved_at + 1")
        print("writing", flush=True)
        sys.stdin.readline()
        conn.execute("COMMIT")
    """)
    proc = subprocess.Popen([sys.executable, "-c", writer], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
        start = time.monotonic()
        reader = EvidenceStore.open(path)
        got = reader.load_bite(KEY)
        assert got is not None and got.value == report()
        assert time.monotonic() - start < 2.0  # it did not wait for the writer (busy timeout is 10 s)
    finally:
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.close()
        proc.wait(timeout=30)
    assert proc.returncode == 0
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_the_environment_digest_follows_the_test_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewui.core.store.key import environment_digest

    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python").write_text("#!/bin/sh\n")
    (fake / "python").chmod(0o755)
    before = environment_digest("LANG=C python -m pytest")
    monkeypatch.setenv("PATH", f"{fake}:{__import__('os').environ['PATH']}")
    assert environment_digest("LANG=C python -m pytest") != before  # another `python` on PATH: another environment
    assert environment_digest("python -m pytest") == environment_digest("LANG=C python -m pytest")


def test_the_environment_digest_follows_the_kernel_and_c_library_and_starts_no_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import subprocess

    from reviewui.core.store import key

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a process was started: {args}")

    monkeypatch.setattr(subprocess.Popen, "__init__", no_process)  # platform.platform() runs `uname -p`
    real = os.uname()
    digests = []
    for release, libc in ((real.release, "glibc 2.36"), ("9.9.9-other", "glibc 2.36"), (real.release, "glibc 2.41")):
        key._process_facts.cache_clear()
        monkeypatch.setattr(os, "uname", lambda release=release: os.uname_result(
            (real.sysname, real.nodename, release, real.version, real.machine)))
        monkeypatch.setattr(os, "confstr", lambda name, libc=libc: libc if name == "CS_GNU_LIBC_VERSION" else None)
        digests.append(key.environment_digest("true"))
    def no_name(name: str) -> str:
        raise ValueError(name)  # a C library that is not glibc has no such name

    monkeypatch.setattr(os, "confstr", no_name)
    key._process_facts.cache_clear()
    assert key._process_facts()[-1] == ""
    key._process_facts.cache_clear()
    assert len(set(digests)) == 3  # another kernel, another C library: another environment


def test_newest_finds_a_branch_or_head_without_a_key(tmp_path: Path) -> None:
    store = EvidenceStore.open(tmp_path / "e.sqlite")
    store.save(KEY, "bite", report(), now=100.0)
    later = replace(KEY, head="c" * 40)
    store.save(later, "bite", report(), now=200.0)
    got = store.newest("bite", BiteReport, repo="/r", branch="agent/x")
    assert got is not None and got.key == later and got.value == report()
    by_head = store.newest("bite", BiteReport, repo="/r", head="a" * 40)
    assert by_head is not None and by_head.key == KEY
    assert store.newest("bite", BiteReport, repo="/r", branch="agent/other") is None


def test_hostile_rows_are_never_read_and_the_file_is_the_users_alone(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "state" / "e.sqlite"
    store = EvidenceStore.open(path)
    assert path.stat().st_mode & 0o077 == 0
    store.save_bite(KEY, report())
    conn = sqlite3.connect(path)
    deep = "[" * 100_000 + "]" * 100_000  # json.loads gives up on it: the row reads as absent
    conn.execute("UPDATE evidence SET payload = ?", (deep,))
    conn.commit()
    assert store.load_bite(KEY) is None
    store.save_bite(KEY, report())
    monkeypatch.setattr(store_db, "MAX_PAYLOAD", 100)  # a row larger than the bound is not even fetched
    assert store.load_bite(KEY) is None
