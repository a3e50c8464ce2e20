"""Which failures `regrade` sets aside: a reader's, and those of every test of a reader's module
(its globals are theirs: one test reads the file, another compares), never another module's."""

from __future__ import annotations

from reviewui.core.bite.report import HunkResult
from reviewui.core.bite.source_readers import readers_by_file, regrade

RECORDED = (("pkg/m.py", ("tests/test_pin.py::test_reads",)),)
"""Baseline.source_readers: one test of tests/test_pin.py read pkg/m.py as data."""


def _bitten(*failing: str) -> HunkResult:
    return HunkResult("pkg/m.py", 0, "@@ -1 +1 @@", "", "bites", failing_tests=failing,
                      messages=dict.fromkeys(failing, "assert 1 == 2"))


def test_a_reader_and_its_module_mates_are_set_aside_and_no_other_test() -> None:
    readers = readers_by_file(RECORDED)
    only_pins = regrade(_bitten("tests/test_pin.py::test_reads", "tests/test_pin.py::test_compares"), readers)
    assert only_pins.verdict == "toothless" and only_pins.failing_tests == () and only_pins.messages == {}
    assert "share a module with one" in only_pins.reason and "test-reads-changed-source" in only_pins.reason
    mixed = regrade(_bitten("tests/test_pin.py::test_compares", "tests/test_pin_more.py::test_real",
                            "tests/test_pin.py/x.py::test_y"), readers)
    assert mixed.verdict == "bites"
    assert mixed.failing_tests == ("tests/test_pin_more.py::test_real", "tests/test_pin.py/x.py::test_y")
    assert set(mixed.messages) == set(mixed.failing_tests)


def test_another_files_readers_leave_this_file_alone() -> None:
    other = HunkResult("pkg/n.py", 0, "@@", "", "bites", failing_tests=("tests/test_pin.py::test_reads",))
    assert regrade(other, readers_by_file(RECORDED)) == other
