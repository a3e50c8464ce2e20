"""plan_sweep, pure: every hunk and guard planned once, batched only where a session runs it exactly."""

from __future__ import annotations

from reviewui.core.bite import guard_tail
from reviewui.core.bite.coverage_map import Selection
from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.guards import Guard
from reviewui.core.bite.origin import ChangedModule
import random

from reviewui.core.bite.guard_check import BatchGuard
from reviewui.core.bite.plan import CONTROLS, Batching, ControlItem, GuardItem, RevertItem, plan_sweep
from reviewui.core.bite.prepare import HunkPlan
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import parse_hunks

FUNC = "def f(x):\n" + "".join(f"    y{n} = x + {n}\n" for n in range(12)) + "    return x\n\n\nTOP = 1\n"


def hunks_of(path: str, count: int = 1, status: str = "modified"):
    patch = f"--- a/{path}\n+++ b/{path}\n" + "".join(f"@@ -{10 * n + 1},0 +{10 * n + 1},1 @@\n+x{n} = {n}\n"
                                                      for n in range(count))
    f = FileDiff(path, None, status, "source", False, count, 0, None, None, None, None, None)
    return [(f, h) for h in parse_hunks(path, patch)]


def guard(path: str, line: int, choice: str = "tests") -> GuardJob:
    g = Guard(file=path, hunk=0, line=line, kind="statement", description="", source=FUNC, start=(line, 4),
              end=(line, 9), replacement="pass", cover_lines=(line,))
    tests = ("tests/test_m.py::test_f",) if choice == "tests" else ()
    return GuardJob(g, Selection(choice, tests), tests)  # type: ignore[arg-type]


def covered(targets, tests=("tests/test_m.py::test_f",)):
    return {h.key: HunkPlan(False, tests) for _, h in targets}


BATCHING = Batching([ChangedModule("pkg/m.py", "pkg.m", "")], lambda path: FUNC if path == "pkg/m.py" else None)


def test_a_red_baseline_plans_every_hunk_skipped_and_runs_nothing() -> None:
    targets = hunks_of("pkg/m.py", 3)
    plan = plan_sweep(targets, "baseline is red: nothing can be learned", [guard("pkg/m.py", 2)], slots=2,
                      batching=BATCHING)
    assert [(r.key, r.verdict, r.reason) for r in plan.known] == [
        (h.key, "skipped", "baseline is red: nothing can be learned") for _, h in targets]
    assert not plan.alone and not plan.sessions and not plan.tail and plan.controls == 0
    assert plan.guard_jobs() == []


def test_uncovered_hunks_are_known_without_a_run_with_their_scope() -> None:
    targets = hunks_of("pkg/m.py", 2)
    plans = {targets[0][1].key: HunkPlan(True, reason="no test runs it", scope="suite"),
             targets[1][1].key: HunkPlan(False, ("tests/test_m.py",), scope="selected")}
    plan = plan_sweep(targets, plans, [], slots=1, batching=None)
    [known] = plan.known
    assert (known.key, known.verdict, known.reason, known.scope) == (targets[0][1].key, "uncovered",
                                                                      "no test runs it", "suite")
    # (was: `plan.alone == (RevertItem(...),)`; the controls now run among the items alone)
    assert [i for i in plan.alone if not isinstance(i, ControlItem)] == [RevertItem(*targets[1], ("tests/test_m.py",))]
    assert plan.controls == CONTROLS
    assert dict(plan.scopes) == {targets[0][1].key: "suite", targets[1][1].key: "selected"}


def test_without_pytest_or_with_batching_off_every_item_runs_alone() -> None:
    targets = hunks_of("pkg/m.py", 2)
    jobs = [guard("pkg/m.py", n) for n in range(2, 12)]
    for batching in (None, "batching off: pytest 9.9 moved `_pytest.main.Session.perform_collect`"):
        plan = plan_sweep(targets, covered(targets), jobs, slots=2, batching=batching)
        assert not plan.sessions and not plan.tail
        assert plan.controls >= CONTROLS and all(c.tests == ("tests/test_m.py::test_f",) for c in plan.alone
                                                 if isinstance(c, ControlItem))  # the graded runs' selection
        assert [i.key for i in plan.alone if isinstance(i, RevertItem)] == [h.key for _, h in targets]
        assert [i.job for i in plan.alone if isinstance(i, GuardItem)] == jobs
        assert plan.batching_off == batching


def test_batchable_reverts_and_guards_share_sessions_and_the_rest_runs_alone() -> None:
    py = hunks_of("pkg/m.py", 2)
    conf = hunks_of("tests/conftest.py")  # read as pytest configures: never in a fork
    whole = hunks_of("pkg/n.py")  # names no test: pytest picks its paths as it configures
    plans = {**covered(py), **covered(conf), whole[0][1].key: HunkPlan(False, ())}
    jobs = [guard("pkg/m.py", n) for n in range(2, 14)]
    at_import = guard("pkg/m.py", 17)  # `TOP = 1`: no function encloses it
    outside = guard("pkg/m.py", 3, choice="all")  # executed outside a test body
    plan = plan_sweep([*py, *conf, *whole], plans, [*jobs, at_import, outside], slots=2, batching=BATCHING)
    alone = {i.key if isinstance(i, RevertItem) else i.job for i in plan.alone if not isinstance(i, ControlItem)}
    assert conf[0][1].key in alone and whole[0][1].key in alone
    assert at_import in alone and outside in alone
    in_sessions = [r.key for s in plan.sessions for r in s.reverts if isinstance(r, RevertItem)]
    assert sorted(in_sessions + [k for k in alone if isinstance(k, tuple) and k[0] == "pkg/m.py"]) == \
        sorted(h.key for _, h in py)
    assert [s.slot for s in plan.sessions] == [0, 1]
    batched = [g.job for s in plan.sessions for g in s.guards if isinstance(g, BatchGuard)] + [g.job for g in plan.tail]
    assert sorted(map(id, batched)) == sorted(map(id, jobs))  # every batchable guard once, and only those
    assert len(plan.tail) == int(len(jobs) * guard_tail.TAIL_SHARE)  # for whichever session is free first
    # (was: one control guard, `plan.control`, graded alone before the sweep; now null guards ride in
    # every session, each its neighbour's function with the head's own code)
    nulls = [g for s in plan.sessions for g in s.guards if isinstance(g, ControlItem)]
    assert len(nulls) >= CONTROLS * len(plan.sessions)
    assert all(c.shape == "guard" and c.guard is not None and c.guard.job.guard.source == FUNC
               and c.guard.module == "pkg.m" and c.guard.path[0][0] == "f" for c in nulls)


def test_every_hunk_and_guard_is_planned_exactly_once() -> None:
    targets = [*hunks_of("pkg/m.py", 3), *hunks_of("README.py"), *hunks_of("pkg/new.py", status="added")]
    plans = covered(targets)
    plans[targets[1][1].key] = HunkPlan(True, reason="nothing runs it")
    jobs = [guard("pkg/m.py", n) for n in range(2, 14)] + [guard("pkg/other.py", 2)]
    for slots in (1, 2, 3):
        plan = plan_sweep(targets, plans, jobs, slots=slots, batching=BATCHING)
        assert sorted(plan.hunk_keys()) == sorted(h.key for _, h in targets)
        assert sorted(map(id, plan.guard_jobs())) == sorted(map(id, jobs))
        assert len(plan.sessions) <= slots
        assert plan.tail == () or slots >= 2  # one session has nobody to balance with


def test_with_fewer_guard_sessions_than_slots_the_other_slots_get_sessions_of_reverts() -> None:
    # (was: the third slot's share of the reverts ran alone; every batchable revert rides in a session now)
    targets = hunks_of("pkg/m.py", 3)
    jobs = [guard("pkg/m.py", 2), guard("pkg/m.py", 3)]  # two batchable guards: two sessions of three slots
    plan = plan_sweep(targets, covered(targets), jobs, slots=3, batching=BATCHING)
    assert len(plan.sessions) == 3 and plan.tail == ()
    assert sorted(r.key for s in plan.sessions for r in s.reverts if isinstance(r, RevertItem)) == \
        sorted(h.key for _, h in targets)
    assert not [i for i in plan.alone if isinstance(i, RevertItem)]
    assert [sum(isinstance(g, BatchGuard) for g in s.guards) for s in plan.sessions] == [1, 1, 0]


def test_a_plan_lists_the_reverts_and_guards_it_runs_alone_too() -> None:
    py = hunks_of("pkg/m.py", 2)
    conf = hunks_of("tests/conftest.py")  # never batched: its revert runs alone
    jobs = [guard("pkg/m.py", 2), guard("pkg/m.py", 3, choice="all")]  # the second runs alone
    plan = plan_sweep([*py, *conf], covered([*py, *conf]), jobs, slots=2, batching=BATCHING)
    assert conf[0][1].key in [i.key for i in plan.alone if isinstance(i, RevertItem)]
    assert sorted(plan.hunk_keys()) == sorted(h.key for _, h in [*py, *conf])
    assert sorted(map(id, plan.guard_jobs())) == sorted(map(id, jobs))


def test_a_hunk_without_a_coverage_scope_records_none() -> None:
    targets = hunks_of("pkg/m.py", 2)
    plans = {targets[0][1].key: HunkPlan(False, ()), targets[1][1].key: HunkPlan(False, ("t.py",), scope="suite")}
    plan = plan_sweep(targets, plans, [], slots=1, batching=None)
    assert dict(plan.scopes) == {targets[1][1].key: "suite"}  # no coverage map, no scope


def test_with_no_batchable_guard_the_reverts_still_share_sessions() -> None:
    # (was: no session at all, every revert alone in a fresh scratch)
    targets = hunks_of("pkg/m.py", 4)
    plan = plan_sweep(targets, covered(targets), [guard("pkg/m.py", 17)], slots=2, batching=BATCHING)
    assert len(plan.sessions) == 2 and plan.tail == ()
    assert all(s.guards == () for s in plan.sessions)
    assert [sum(isinstance(r, RevertItem) for r in s.reverts) for s in plan.sessions] == [2, 2]
    assert [type(i).__name__ for i in plan.alone if not isinstance(i, ControlItem)] == ["GuardItem"]


def test_controls_are_placed_at_random_one_in_each_half_shaped_as_their_neighbours() -> None:
    targets = hunks_of("pkg/m.py", 8)
    plans = {h.key: HunkPlan(False, (f"tests/test_m.py::test_{n}",)) for n, (_, h) in enumerate(targets)}
    orders = set()
    for seed in range(40):
        plan = plan_sweep(targets, plans, [], slots=1, batching=BATCHING, rng=random.Random(seed))
        [session] = plan.sessions
        kinds = [isinstance(r, ControlItem) for r in session.reverts]
        orders.add(tuple(kinds))
        places = [n for n, k in enumerate(kinds) if k]
        assert len(places) == CONTROLS
        graded_before = [sum(not k for k in kinds[:p]) for p in places]
        assert graded_before[0] <= 4 and graded_before[-1] >= 4  # one in each half of the eight reverts
        graded = [r for r in session.reverts if isinstance(r, RevertItem)]
        for p in places:
            c = session.reverts[p]
            assert isinstance(c, ControlItem) and c.shape == "revert" and c.file is targets[0][0]
            assert c.tests in {r.tests for r in graded}  # a graded revert's own selection
    assert len(orders) > 5  # random, not fixed places
    plain = plan_sweep(targets, plans, [], slots=1, batching=BATCHING, controls=0)
    assert plain.controls == 0


def test_every_phase_of_a_session_gets_its_own_controls() -> None:
    targets = hunks_of("pkg/m.py", 2)
    jobs = [guard("pkg/m.py", n) for n in range(2, 14)]
    plan = plan_sweep(targets, covered(targets), jobs, slots=1, batching=BATCHING, rng=random.Random(1))
    [session] = plan.sessions
    assert sum(isinstance(r, ControlItem) for r in session.reverts) == CONTROLS
    assert sum(isinstance(g, ControlItem) for g in session.guards) == CONTROLS
    assert plan.controls == 2 * CONTROLS


def test_the_controls_cover_as_many_of_a_phases_selections_as_they_can() -> None:
    targets = hunks_of("pkg/m.py", 6)
    plans = {h.key: HunkPlan(False, ("tests/test_a.py::test_a",) if n else ("tests/test_b.py",))
             for n, (_, h) in enumerate(targets)}
    for seed in range(30):
        plan = plan_sweep(targets, plans, [], slots=1, batching=BATCHING, rng=random.Random(seed))
        [session] = plan.sessions
        assert {c.tests for c in session.reverts if isinstance(c, ControlItem)} == {
            ("tests/test_a.py::test_a",), ("tests/test_b.py",)}  # the rare selection too, every time


def test_a_small_plan_opens_no_more_sessions_than_its_work_pays_for() -> None:
    from reviewui.core.bite.plan import GUARD_WORK, SESSION_SHARE, session_count

    assert SESSION_SHARE >= 4 and 0 < GUARD_WORK <= 1
    assert session_count(8, 0, 2, 8.0) == 1  # bench_bite's 8 hunks: one session, not two of four
    assert session_count(16, 0, 2, 8.0) == 2
    assert session_count(8, 16, 2, 8.0) == 2  # guards count half: 8 + 8
    assert session_count(300, 0, 4, 8.0) == 4  # never past the slots
    assert session_count(3, 0, 3, 8.0) == 1 and session_count(0, 0, 2, 8.0) == 1
    assert session_count(3, 0, 3, 0.0) == 3  # no share: one per slot, as before

    small = hunks_of("pkg/m.py", 8)
    plan = plan_sweep(small, covered(small), [], slots=2, batching=BATCHING, share=SESSION_SHARE)
    assert len(plan.sessions) == 1 and plan.tail == ()
    assert sorted(r.key for r in plan.sessions[0].reverts if isinstance(r, RevertItem)) == sorted(h.key for _, h in small)
    assert sum(isinstance(r, ControlItem) for r in plan.sessions[0].reverts) == CONTROLS
    big = hunks_of("pkg/m.py", 16)
    plan = plan_sweep(big, covered(big), [], slots=2, batching=BATCHING, share=SESSION_SHARE)
    assert [sum(isinstance(r, RevertItem) for r in s.reverts) for s in plan.sessions] == [8, 8]
    # guards add work: 8 reverts and 16 guards are two sessions' worth, with a tail between them
    jobs = [guard("pkg/m.py", n) for n in range(2, 14)] * 2
    plan = plan_sweep(small, covered(small), jobs, slots=2, batching=BATCHING, share=SESSION_SHARE)
    assert len(plan.sessions) == 2 and len(plan.tail) == int(len(jobs) * guard_tail.TAIL_SHARE)
