"""The grades table of the evidence store: kept and read back exactly, bad rows absent, outputs capped."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.report import HunkResult
from reviewui.core.store.db import EvidenceStore
from reviewui.core.store.grades import OUTPUT_KEPT

HUNK = HunkResult("pkg/a.py", 0, "@@ -1,2 +1,3 @@", "@@ -1,2 +1,3 @@\n+x\n", "bites", failing_tests=("t::a",),
                  messages={"t::a": "assert 1 == 2"}, tests_run=("t::a",), passed_tests=("t::b",))
GUARD = GuardResult("pkg/a.py", 0, 2, "condition", "`x` -> `True`", "toothless", start=(2, 4), end=(2, 5),
                    replacement="True", output="o" * (OUTPUT_KEPT * 3))


def test_kept_and_read_back_by_key(tmp_path: Path) -> None:
    store = EvidenceStore.open(tmp_path / "s.sqlite")
    book = store.grades("ctx")
    assert book.get(["h", "g"]) == {}
    book.put([("h", HUNK), ("g", GUARD)])
    got = store.grades("ctx").get(["h", "g", "nope"])
    assert got["h"] == HUNK
    assert isinstance(got["g"], GuardResult) and got["g"].verdict == "toothless"
    assert len(got["g"].output) < OUTPUT_KEPT + 100 < len(GUARD.output)  # the output is capped
    store.close()


def test_a_row_that_does_not_decode_is_absent(tmp_path: Path) -> None:
    store = EvidenceStore.open(tmp_path / "s.sqlite")
    store.grades("ctx").put([("h", HUNK)])
    store.close()
    with sqlite3.connect(tmp_path / "s.sqlite") as conn:
        conn.execute("INSERT INTO grades VALUES ('bad', 'hunk', 0, '{\"file\": 3}')")
        conn.execute("INSERT INTO grades VALUES ('odd', 'other', 0, '{}')")
        conn.execute("UPDATE grades SET payload = 'not json' WHERE key = 'h'")
    again = EvidenceStore.open(tmp_path / "s.sqlite")
    assert again.grades("ctx").get(["h", "bad", "odd"]) == {}
    again.close()


def test_a_store_that_cannot_be_used_keeps_and_finds_nothing(tmp_path: Path) -> None:
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "s.sqlite").mkdir()  # a directory where the database should be
    store = EvidenceStore.open(tmp_path / "ro" / "s.sqlite")
    book = store.grades("ctx")
    book.put([("h", HUNK)])
    assert book.get(["h"]) == {}
