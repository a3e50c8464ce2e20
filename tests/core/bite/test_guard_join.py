"""GuardJoin: a hunk's result is emitted once, complete, with its guards in line order."""

from __future__ import annotations

from reviewui.core.bite import coverage_map as cm
from reviewui.core.bite.guard_check import GuardJob, GuardJoin, result, select_for_guard
from reviewui.core.bite.guards import generate
from reviewui.core.bite.report import HunkResult

SRC = "def f(a, b):\n    if a < b:\n        g()\n        return 1\n    return 2\n"


def jobs(hunk: int = 0) -> list[GuardJob]:
    return [GuardJob(g, cm.Selection("all"), ()) for g in generate(SRC, [1, 2, 3, 4, 5], file="m.py", hunk=hunk)]


def test_hunk_waits_for_its_guards_and_keeps_plan_order() -> None:
    plan = jobs()
    assert len(plan) >= 4
    seen: list[HunkResult] = []
    join = GuardJoin(plan, seen.append)
    for job in reversed(plan[1:]):
        join.take((job, result(job, "bites")))
    join.take(HunkResult("m.py", 0, "@@", "", "broken"))
    assert seen == []  # one guard still out
    join.take((plan[0], result(plan[0], "toothless")))
    assert len(seen) == 1
    assert [g.line for g in seen[0].guards] == [j.guard.line for j in plan]
    assert seen[0].guards[0].verdict == "toothless" and seen[0].verdict == "broken"


def test_a_hunk_without_guards_passes_straight_through() -> None:
    seen: list[HunkResult] = []
    join = GuardJoin(jobs(hunk=1), seen.append)
    join.take(HunkResult("m.py", 0, "@@", "", "bites"))
    assert [r.guards for r in seen] == [()]


def test_selection_by_line_contexts() -> None:
    [g] = [j.guard for j in jobs() if j.guard.kind == "boundary"]
    cov = cm.CoverageMap({"m.py": {2: frozenset({"t.py::test_a|call", "t.py::test_b|call"})}}, frozenset())
    assert select_for_guard(cov, g) == cm.Selection("tests", ("t.py::test_a", "t.py::test_b"))
    setup = cm.CoverageMap({"m.py": {2: frozenset({"t.py::test_a|setup"})}}, frozenset())
    assert select_for_guard(setup, g).choice == "all"
    assert select_for_guard(cm.CoverageMap({"m.py": {5: frozenset({"x|call"})}}, frozenset()), g).choice == "uncovered"
    assert select_for_guard(None, g).choice == "all"
