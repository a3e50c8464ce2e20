"""A sweep in a few numbers, stored beside it: what the review queue reads of every branch's evidence.

The queue shows thousands of branches; decoding each one's whole stored sweep
(every hunk, guard and output) to count its verdicts would cost seconds. So a
sweep saved with its findings also saves this summary, under the same key:
the queue reads only summaries, and decides whether each is current with the
same rule as `bite` (EvidenceStore.latest_for_many).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from reviewui.core.bite.report import BiteReport
    from reviewui.core.findings.model import Finding

KIND = "summary"
"""The store kind of a summary."""
BITES = ("bites",)
TOOTHLESS = ("toothless", "uncovered")
UNGRADED = ("not-code", "skipped")


@dataclass(frozen=True)
class SweepSummary:
    """What the queue shows of one stored sweep."""

    baseline: str
    """The baseline's status (`green`, `red`, …): anything but green is broken evidence."""
    baseline_reason: str = ""
    """Why the baseline was not green (first 80 characters)."""
    bites: int = 0
    """Hunks and guards that bite."""
    total: int = 0
    """Hunks and guards graded."""
    toothless: int = 0
    """Hunks and guards toothless or uncovered."""
    findings: dict[str, int] = field(default_factory=dict)
    """Findings by severity."""
    contradicted: int = 0
    """Claims contradicted at the head."""
    config_changed: bool = False
    """The branch changes reviewui's config (a `config-changed` finding)."""
    red_own: int = 0
    """The branch's own new or changed tests red at its head (Baseline.own_red, `test-red-at-head` findings)."""


def summarize(report: BiteReport, findings: Sequence[Finding] | None = None) -> SweepSummary:
    """The summary of a sweep and the findings made with it."""
    verdicts: list[str] = [r.verdict for r in report.results if r.verdict not in UNGRADED]
    verdicts += [g.verdict for r in report.results for g in r.guards if g.verdict not in UNGRADED]
    counts: dict[str, int] = {}
    for f in findings or ():
        counts[f.severity] = counts.get(f.severity, 0) + 1
    return SweepSummary(
        baseline=report.baseline.status, baseline_reason=report.baseline.reason[:80],
        bites=sum(v in BITES for v in verdicts), total=len(verdicts),
        toothless=sum(v in TOOTHLESS for v in verdicts), findings=counts,
        contradicted=sum(f.kind == "claim-contradicted" for f in findings or ()),
        config_changed=any(f.kind == "config-changed" for f in findings or ()),
        red_own=max(len(report.baseline.own_red), sum(f.kind == "test-red-at-head" for f in findings or ())))
