"""Which tests the null-revert control names: node ids as a guided revert does, unless they would not fit."""

from __future__ import annotations

from reviewui.core.bite.control import ARGV_BUDGET, control_tests
from reviewui.core.bite.report import Baseline


def test_control_tests() -> None:
    ids = ("tests/test_a.py::test_x", "tests/test_a.py::test_y[1-2]")
    green = Baseline("green", tests=ids)
    assert control_tests(green, True, ("tests/test_a.py",)) == ids
    assert control_tests(green, False, ("tests/test_a.py",)) == ("tests/test_a.py",)
    assert control_tests(green, False, ()) == ()
    many = Baseline("green", tests=tuple(f"tests/test_a.py::test_{n:06d}" for n in range(ARGV_BUDGET // 20)))
    assert control_tests(many, True, ("tests/test_a.py",)) == ("tests/test_a.py",)  # past the budget: the files
