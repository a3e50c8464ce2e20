"""The queue's tiers and reasons, from hand-built records: every tier, every reason, ties by waiting time."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

from reviewui.core.queue.order import BranchRecord, Evidence, order, place, stalled

T0 = datetime(2026, 11, 30, 12, tzinfo=timezone.utc)
READY = Evidence("ready", bites=5, total=5)


def rec(name: str, hours_ago: float = 1, **kw: object) -> BranchRecord:
    return BranchRecord(branch=name, head=name + "-head", base="base", changed_at=T0 - timedelta(hours=hours_ago),
                        **kw)  # type: ignore[arg-type]


def test_each_state_gets_its_tier_and_reason() -> None:
    cases = [
        (rec("a", verdict="approve", currency="outdated"), 1, "approval outdated by rework"),
        (rec("b", verdict="reject", currency="current", merged=True), 1, "merged although rejected"),
        (rec("c", evidence=READY), 2, "unreviewed, evidence ready: nothing stands out"),
        (rec("d"), 3, "evidence pending"),
        (rec("e", evidence=Evidence("running")), 3, "evidence running"),
        (rec("f", evidence=Evidence("broken", why="baseline red")), 3, "evidence broken: baseline red"),
        (rec("g", verdict="reject", currency="current"), 4, "rejected; waiting on the agent"),
        (rec("h", snoozed=True, evidence=READY), 4, "snoozed until the branch changes"),
        (rec("i", verdict="approve", currency="current"), 5, "approved"),
        (rec("j", verdict="approve", currency="carried"), 5, "approved, carried over a trivial rebase"),
    ]
    for record, tier, reason in cases:
        row = place(record)
        assert (row.tier, row.reason.startswith(reason)) == (tier, True), (record.branch, row)


def test_a_rejected_branch_reworked_since_is_back_for_review() -> None:
    row = place(rec("k", verdict="reject", currency="outdated", evidence=READY))
    assert row.tier == 2 and row.reason.startswith("reworked since the reject")


def test_an_approved_branch_is_hidden_once_merged() -> None:
    assert place(rec("m", verdict="approve", currency="current", merged=True)).hidden
    assert not place(rec("m", verdict="approve", currency="current")).hidden


def test_the_order_is_tier_then_risk_then_longest_waiting() -> None:
    risky = Evidence("ready", toothless=3, findings={"error": 2}, contradicted=1)
    mild = Evidence("ready", toothless=1)
    rows = order([
        rec("approved", verdict="approve", currency="current"),
        rec("new-pending", hours_ago=1), rec("old-pending", hours_ago=9),
        rec("mild", hours_ago=20, evidence=mild), rec("risky", hours_ago=2, evidence=risky),
        rec("calm-old", hours_ago=30, evidence=READY), rec("outdated", verdict="approve", currency="outdated"),
    ])
    assert [r.record.branch for r in rows] == ["outdated", "risky", "mild", "calm-old", "old-pending", "new-pending",
                                               "approved"]
    assert rows[1].reason == "unreviewed, evidence ready: 1 contradicted claim, 2 error findings, 3 toothless"


def test_ties_in_a_tier_go_to_the_longest_waiting() -> None:
    rows = order([rec("b", hours_ago=1), rec("a", hours_ago=5), rec("c", hours_ago=3)])
    assert [r.record.branch for r in rows] == ["a", "c", "b"]


def test_a_sweep_past_three_medians_is_stalled() -> None:
    running = Evidence("running")
    assert stalled(running, 100, 30).status == "stalled"
    assert stalled(running, 80, 30).status == "running"
    assert place(replace(rec("s"), evidence=stalled(running, 100, 30))).reason.startswith("evidence stalled")


def test_stalled_is_only_for_a_running_sweep_past_exactly_three_medians() -> None:
    # found toothless by `reviewui bite --guards` on this module
    assert stalled(Evidence("ready"), 100, 30).status == "ready"
    assert stalled(Evidence("running"), 100, None).status == "running"  # no sweep finished yet: no median
    assert stalled(Evidence("running"), 90, 30).status == "running"  # at three medians, not past them
    assert place(rec("p")).reason == "evidence pending"  # no why: nothing after the status
