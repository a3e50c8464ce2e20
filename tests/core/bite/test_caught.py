"""What the failed controls come to (caught.py): a refusal for the branch's own tests, a quarantine for old ones.

Pure: controls, held grades and a baseline made by hand. The sweeps that make
them for real are in test_control_quarantine.py (an order-dependent old test)
and tests/hostile (a run counter, a forgery through old tests).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from reviewui.core.bite.caught import quarantined, settle, sort_out, strip, strip_hunk
from reviewui.core.bite.control import ControlResult
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.instrument import UntrustedCommand
from reviewui.core.bite.report import CAUGHT_ALONE, CAUGHT_NULL, CAUGHT_ORDER, Baseline, HunkResult
from reviewui.core.bite.sweep import Spec, Sweep
from reviewui.core.config import Settings
from tests.core.bite.helpers import load
from tests.gitrepo import make_repo

OLD, OLD2, MINE = "tests/test_old.py::test_a", "tests/test_old.py::test_b", "tests/test_new.py::test_c"
GREEN = Baseline("green", tests=(OLD, OLD2, MINE, "tests/test_old.py::test_d"))
SEL = (OLD, OLD2, MINE)


def old(t: str) -> bool:
    return t.startswith("tests/test_old.py")


def hunk(*failing: str, verdict: str = "bites", guards: tuple[GuardResult, ...] = ()) -> HunkResult:
    return HunkResult("pkg/m.py", 0, "@@ -1 +1 @@", "", verdict, failing_tests=failing,  # type: ignore[arg-type]
                      messages=dict.fromkeys(failing, "boom"), guards=guards)


def guard(*failing: str) -> GuardResult:
    return GuardResult("pkg/m.py", 0, 2, "if", "x", "bites", failing_tests=failing)


def test_no_failed_control_is_neither_a_refusal_nor_a_quarantine() -> None:
    found = sort_out([ControlResult("revert", SEL), ControlResult("guard", SEL, no_tests=True)], GREEN, old)
    assert (found.refused, found.old) == (None, ())


def test_a_control_failing_only_on_old_tests_quarantines_them() -> None:
    found = sort_out([ControlResult("revert", SEL, (OLD,)), ControlResult("guard", SEL, (OLD, OLD2))], GREEN, old)
    assert found.refused is None and found.old == (OLD, OLD2)


@pytest.mark.parametrize("failing", [(MINE,), (OLD, MINE), ("the run timed out after 3.0s",),
                                     ("tests/test_old.py::test_gone",)],
                         ids=["own", "old-and-own", "not-a-test", "not-green-in-the-baseline"])
def test_anything_but_old_green_tests_refuses_naming_the_tests(failing: tuple[str, ...]) -> None:
    found = sort_out([ControlResult("revert", SEL, failing)], GREEN, old)
    assert found.old == () and isinstance(found.refused, UntrustedCommand)
    assert found.refused.tests == tuple(t for t in failing if t in GREEN.tests)
    assert "not trusted for bites" in str(found.refused) and failing[0] in str(found.refused)


def test_a_quarantine_that_would_leave_no_green_test_refuses() -> None:
    base = Baseline("green", tests=(OLD, OLD2))
    found = sort_out([ControlResult("revert", SEL, (OLD, OLD2))], base, old)
    assert isinstance(found.refused, UntrustedCommand) and found.refused.tests == (OLD, OLD2)


def test_a_bite_resting_only_on_caught_tests_is_toothless_and_says_why() -> None:
    r = strip(hunk(OLD, OLD2), {OLD: CAUGHT_ORDER, OLD2: CAUGHT_ALONE})
    assert (r.verdict, r.failing_tests, r.messages) == ("toothless", (), {})
    assert OLD in r.reason and OLD2 in r.reason and "only quarantined tests failed" in r.reason


def test_a_bite_with_another_failing_test_keeps_biting_without_the_caught_one() -> None:
    r = strip(hunk(OLD, MINE), {OLD: CAUGHT_ORDER})
    assert (r.verdict, r.failing_tests, r.messages, r.reason) == ("bites", (MINE,), {MINE: "boom"}, "")


def test_other_verdicts_stand_and_untouched_items_are_the_same_object() -> None:
    broken = hunk(OLD, verdict="broken")
    assert strip(broken, {OLD: CAUGHT_NULL}).verdict == "broken"
    clean = hunk(MINE)
    assert strip(clean, {OLD: CAUGHT_NULL}) is clean


def test_a_hunks_guards_are_stripped_with_it() -> None:
    r = strip_hunk(hunk(MINE, guards=(guard(OLD), guard(OLD, MINE))), {OLD: CAUGHT_ORDER})
    assert [(g.verdict, g.failing_tests) for g in r.guards] == [("toothless", ()), ("bites", (MINE,))]


def test_old_tests_no_control_vouched_for_give_no_bite_once_old_tests_were_caught() -> None:
    # The controls ran SEL only (one failed on OLD). An item of another selection biting by an old
    # test could be the same forgery the controls did not mirror there: not graded (skipped), and its
    # own tests still count; an item of SEL keeps its old tests that passed the control.
    other = ("tests/test_old.py::test_d", MINE)
    unvouched_old = HunkResult("pkg/u.py", 0, "@@", "", "bites", failing_tests=("tests/test_old.py::test_d",))
    unvouched_mine = HunkResult("pkg/w.py", 0, "@@", "", "bites", failing_tests=("tests/test_old.py::test_d", MINE))
    vouched = HunkResult("pkg/v.py", 0, "@@", "", "bites", failing_tests=(OLD2,))
    job = SimpleNamespace(tests=other)
    sel = {unvouched_old.key: other, unvouched_mine.key: other, vouched.key: SEL}
    held, why = settle([unvouched_old, unvouched_mine, vouched, (job, guard("tests/test_old.py::test_d"))],  # type: ignore[list-item]
                       [ControlResult("revert", SEL, (OLD,))], GREEN, old,
                       lambda x: sel[x.key] if isinstance(x, HunkResult) else x[0].tests,
                       lambda t: False)
    assert why == {OLD: CAUGHT_ORDER}
    u, m, v, (_, g) = held  # type: ignore[misc]
    assert (u.verdict, u.failing_tests) == ("skipped", ()) and "no control ran its tests" in u.reason
    assert (m.verdict, m.failing_tests) == ("bites", (MINE,))
    assert v is vouched
    assert g.verdict == "skipped"


def test_a_follow_up_control_settles_a_selection_no_control_ran() -> None:
    # As above, with one more control of the unvouched selection run once the controls caught OLD:
    # it fails on test_d too (the forgery, caught there as well: quarantined, the bite toothless),
    # or it passes (the revert alone failed test_d: the bite stands).
    other = ("tests/test_old.py::test_d", MINE)
    forged = HunkResult("pkg/u.py", 0, "@@", "", "bites", failing_tests=("tests/test_old.py::test_d",))
    asked: list[tuple[str, ...]] = []

    def follow(failing: tuple[str, ...]):  # type: ignore[no-untyped-def]
        def run(tests: tuple[str, ...]) -> ControlResult:
            asked.append(tests)
            return ControlResult("revert", tests, failing)
        return run

    controls = [ControlResult("revert", SEL, (OLD,))]
    held, why = settle([forged], controls, GREEN, old, lambda x: other, lambda t: False,
                       follow(("tests/test_old.py::test_d",)))
    assert asked == [other] and len(controls) == 2  # counted among the sweep's controls
    assert set(why) == {OLD, "tests/test_old.py::test_d"}
    assert (held[0].verdict, held[0].failing_tests) == ("toothless", ())
    held, why = settle([forged], [ControlResult("revert", SEL, (OLD,))], GREEN, old, lambda x: other,
                       lambda t: False, follow(()))
    assert held[0] is forged and set(why) == {OLD}
    # A follow-up failing on the branch's own test refuses, as any control does.
    with pytest.raises(UntrustedCommand):
        settle([forged], [ControlResult("revert", SEL, (OLD,))], GREEN, old, lambda x: other, lambda t: False,
               follow((MINE,)))
    # None asked when nothing was caught, or the selection was run by a control.
    asked.clear()
    settle([forged], [ControlResult("revert", SEL)], GREEN, old, lambda x: other, lambda t: False, follow(()))
    settle([forged], [ControlResult("revert", SEL, (OLD,))], GREEN, old, lambda x: SEL, lambda t: False, follow(()))
    assert asked == []


def test_settle_raises_the_refusal_and_leaves_a_clean_sweep_alone() -> None:
    held = [hunk(OLD)]
    with pytest.raises(UntrustedCommand) as e:
        settle(held, [ControlResult("revert", SEL, (MINE,))], GREEN, old, lambda x: SEL, lambda t: False)
    assert e.value.tests == (MINE,)
    assert settle(held, [ControlResult("revert", SEL)], GREEN, old, lambda x: SEL, lambda t: False) == (held, {})


def test_why_is_said_by_a_run_alone_for_the_first_few_only() -> None:
    tests = [f"tests/test_old.py::test_{n}" for n in range(7)]
    base = Baseline("green", tests=(*tests, MINE))
    asked: list[str] = []

    def alone(t: str) -> bool | None:
        asked.append(t)
        return {0: True, 1: False}.get(int(t[-1]))  # the rest: not run (cancelled)

    _, why = settle([], [ControlResult("revert", SEL, tuple(tests))], base, old, lambda x: SEL, alone)
    assert [why[t] for t in tests] == [CAUGHT_ALONE, CAUGHT_ORDER, *[CAUGHT_NULL] * 5]
    assert asked == tests[:5]


def test_the_report_baseline_quarantines_them_with_why() -> None:
    base = Baseline("green", tests=(OLD, MINE), quarantined=("tests/test_old.py::test_red",),
                    why={"tests/test_old.py::test_red": "red at the head"}, reason="1 test red at the head")
    b = quarantined(base, {OLD: CAUGHT_ORDER})
    assert b.tests == (MINE,)
    assert b.quarantined == ("tests/test_old.py::test_red", OLD)
    assert b.why == {"tests/test_old.py::test_red": "red at the head", OLD: CAUGHT_ORDER}
    assert b.reason.startswith("1 test red at the head; 1 old test quarantined") and OLD in b.reason


def test_only_a_test_of_a_file_the_base_has_that_the_branch_did_not_write_is_old(tmp_path) -> None:
    repo = make_repo(tmp_path / "repo", {"pkg/__init__.py": "", "tests/test_old.py": "def test_a():\n    pass\n"},
                     {"pkg/__init__.py": "X = 1\n", "tests/test_old.py": "def test_a():\n    pass\n\n\ndef test_b():\n"
                      "    pass\n", "tests/test_new.py": "def test_c():\n    pass\n"})
    t, d = load(repo.root)

    def sweep(own: tuple[str, ...] | None) -> Sweep:
        return Sweep(t, d, Settings(), Spec.of(d, Settings(), None, None, False), False, 30, None, None, own)

    mine = sweep(("tests/test_old.py::test_b",))
    assert mine.is_old("tests/test_old.py::test_a") and mine.is_old("tests/test_old.py::test_a[1]")
    assert not mine.is_old("tests/test_old.py::test_b") and not mine.is_old("tests/test_old.py::test_b[x]")
    assert not mine.is_old("tests/test_new.py::test_c")  # its file is new, whatever the caller says
    assert not sweep(None).is_old("tests/test_old.py::test_a")  # not told which tests are the branch's: none is old
