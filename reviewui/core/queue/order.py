"""The review queue's order: which agent branch needs the reviewer first, and why, from state alone.

One pure function, `order(records, now)`, gives every row its tier and a
reason, like Gerrit's attention set or Critique's dashboard:

1. needs a human now: an approval outdated by rework (the patch changed since
   the approve, whitespace included), a branch merged although it was rejected,
   an unreviewed branch whose own new or changed test fails at its head (red is red);
2. unreviewed with its evidence ready, riskiest first (toothless hunks and
   guards, error findings, contradicted claims, a changed config);
3. evidence pending, running, stalled (past 3× the median sweep time), stale
   (made from another key: what changed is said) or broken (a red baseline,
   an untrusted test command);
4. waiting on the agent: rejected and not changed since, snoozed by the
   reviewer, or no commits beyond the base yet;
5. approved and current (a trivial rebase, one that changed no byte of the
   patch, keeps an approval); hidden once merged.

The verdict a row shows is the verdict relation's (core/notes/relation.py):
only a review that counts (a trusted signature, or recorded here) approves.

Inside a tier a small delta comes first (a reworked branch whose patch changed
in at most SMALL_DELTA hunks since its verdict: a second look is quick), then
the branch that has waited longest since its last change (tier 2: riskiest
first, then longest waiting).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal, Sequence

Currency = Literal["current", "carried", "outdated", "none"]
EvidenceStatus = Literal["ready", "pending", "running", "stalled", "broken", "stale", "empty"]

SMALL_DELTA = 5
"""Hunks new or changed since an outdated verdict up to which a branch goes before others of its tier."""

TIER_NAMES = {1: "needs you now", 2: "ready for review", 3: "evidence not ready", 4: "waiting on the agent",
              5: "approved"}


@dataclass(frozen=True)
class Evidence:
    """What is known of a branch's evidence (from the evidence store), or that it is still coming."""

    status: EvidenceStatus
    bites: int = 0
    """Hunks and guards that bite."""
    total: int = 0
    """Hunks and guards graded."""
    toothless: int = 0
    """Hunks and guards that are toothless or uncovered."""
    findings: dict[str, int] = field(default_factory=dict)
    """Findings by severity (`error`, `warning`, `info`)."""
    contradicted: int = 0
    """Claims contradicted at the head."""
    config_changed: bool = False
    why: str = ""
    """For pending/running/stalled/broken/stale/empty: what is going on (a red baseline, what changed, …)."""
    red_own: int = 0
    """The branch's own new or changed tests red at its head (`test-red-at-head` findings)."""


PENDING = Evidence("pending")
NO_COMMITS = "no commits beyond the base"
"""The reason of a branch whose head the base already has (made, not yet worked on)."""
NO_CHANGE = "no change against the base"
"""The reason of a branch whose commits change nothing."""


@dataclass(frozen=True)
class BranchRecord:
    """One agent branch as the queue sees it: read from git, the notes and the evidence store."""

    branch: str
    """Short name (`agent/fix-42`, `origin/agent/x` with --remotes)."""
    head: str
    base: str
    """The merge-base the branch is reviewed against."""
    changed_at: datetime
    """When the head commit was made (the branch's last change)."""
    merged: bool = False
    """The head is in the base branch already."""
    verdict: str | None = None
    """The branch's verdict as the verdict relation decides it (`approve` / `reject`), any head."""
    verdict_by: str | None = None
    verdict_at: datetime | None = None
    currency: Currency = "none"
    """Does that verdict cover this head: current / carried (same verbatim patch id) / outdated / none."""
    verdict_provenance: str = ""
    """Where the deciding review came from: `recorded here`, `pulled from REMOTE`, or ""."""
    not_counted: int = 0
    """Reviews of the branch that do not count (unsigned from elsewhere, untrusted or bad signatures)."""
    snoozed: bool = False
    """The reviewer snoozed it and the branch has not moved since."""
    evidence: Evidence = PENDING
    added: int = 0
    removed: int = 0
    files: int = 0
    transcript: Literal["present", "unparsed", "none"] = "none"
    agent: str | None = None
    task: str | None = None
    delta: int | None = None
    """Hunks new or changed since the verdict (core/delta), when the verdict is outdated; else None."""
    verdict_mine: bool = False
    """The verdict is the reviewer's own (their identity, recorded in this clone): the delta says `your`."""


def delta_words(r: BranchRecord) -> str:
    """`changed since your approve: 3 hunks` for an outdated verdict whose delta is known, else ""."""
    if r.delta is None or r.verdict is None:
        return ""
    return f"changed since {'your' if r.verdict_mine else 'the'} {r.verdict}: {r.delta} hunk{'s' * (r.delta != 1)}"


@dataclass(frozen=True)
class Row:
    """A record placed in the queue."""

    record: BranchRecord
    tier: int
    reason: str
    risk: int = 0
    """Higher is riskier (tier 2's order)."""
    hidden: bool = False
    """Approved, current and merged: not shown unless asked."""


def risk(e: Evidence) -> tuple[int, list[str]]:
    """A risk score and its words: toothless hunks/guards, error findings, contradicted claims, config."""
    words: list[str] = []
    score = 0
    errors = e.findings.get("error", 0)
    if e.contradicted:
        score += 100 * e.contradicted
        words.append(f"{e.contradicted} contradicted claim{'s' * (e.contradicted > 1)}")
    if e.config_changed:
        score += 50
        words.append("config changed")
    if errors:
        score += 20 * errors
        words.append(f"{errors} error finding{'s' * (errors > 1)}")
    if e.toothless:
        score += 10 * e.toothless
        words.append(f"{e.toothless} toothless")
    return score, words


def place(r: BranchRecord) -> Row:
    """The tier, reason and risk of one branch."""
    if r.verdict == "approve" and r.currency == "outdated":
        return Row(r, 1, "approval outdated by rework: the patch changed since the approve")
    if r.verdict == "reject" and r.merged:
        return Row(r, 1, "merged although rejected")
    if r.verdict == "approve" and r.currency in ("current", "carried"):
        why = "approved" + (", carried over a trivial rebase" if r.currency == "carried" else "")
        return Row(r, 5, why + (" and merged" if r.merged else ""), hidden=r.merged)
    if r.verdict == "reject" and r.currency in ("current", "carried"):
        return Row(r, 4, "rejected; waiting on the agent to change it")
    if r.snoozed:
        return Row(r, 4, "snoozed until the branch changes")
    e = r.evidence
    if e.status == "empty":
        return Row(r, 4, e.why or NO_COMMITS)
    again = "reworked since the reject; " if r.verdict == "reject" else ""
    if e.red_own:
        return Row(r, 1, f"{again}its own test fails" + (f" ({e.red_own} red at the head)" if e.red_own > 1 else ""))
    if e.status == "ready":
        score, words = risk(e)
        what = ", ".join(words) if words else "nothing stands out"
        return Row(r, 2, f"{again}unreviewed, evidence ready: {what}", risk=score)
    status = {"pending": "evidence pending", "running": "evidence running", "stalled": "evidence stalled",
              "broken": "evidence broken", "stale": "evidence stale"}[e.status]
    if e.status == "stale":
        return Row(r, 3, f"{again}{status} ({e.why})")
    return Row(r, 3, f"{again}{status}" + (f": {e.why}" if e.why else ""))


def order(records: Sequence[BranchRecord]) -> list[Row]:
    """Every record placed and sorted: by tier, then a small delta first, then (tier 2) riskiest first, then
    longest waiting, then name."""
    rows = [place(r) for r in records]

    def small(r: BranchRecord) -> int:
        return 0 if r.delta is not None and r.delta <= SMALL_DELTA else 1

    return sorted(rows, key=lambda row: (row.tier, small(row.record), -row.risk if row.tier == 2 else 0,
                                         row.record.changed_at, row.record.branch))


def stalled(e: Evidence, running_for: float, median_sweep: float | None) -> Evidence:
    """`e` marked stalled when its sweep has run past 3× the median sweep time."""
    if e.status == "running" and median_sweep and running_for > 3 * median_sweep:
        return replace(e, status="stalled", why=f"running {running_for:.0f}s, 3× the median sweep is "
                                                f"{3 * median_sweep:.0f}s")
    return e
