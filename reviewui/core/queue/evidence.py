"""The queue's evidence column, read from the evidence store: what a sweep of a branch's head found.

A row's evidence is `ready` when the store holds a finished sweep of exactly
that head against that base, `broken` when that sweep's baseline was not
green, and `pending` otherwise. Nothing here runs a test.
"""

from __future__ import annotations

from typing import Callable

from reviewui.core.queue.order import Evidence

BITES = ("bites",)
TOOTHLESS = ("toothless", "uncovered")
UNGRADED = ("not-code", "skipped")


def store_evidence(repo: str) -> Callable[[str, str], Evidence | None]:
    """`evidence_for(head, base)` over the user's evidence store (None for a head it knows nothing of)."""
    from reviewui.core.bite.report import BiteReport
    from reviewui.core.store.db import EvidenceStore, StoredFindings

    store = EvidenceStore.open()

    def evidence_for(head: str, base: str) -> Evidence | None:
        stored = store.newest("bite", BiteReport, repo=repo, head=head)
        if stored is None or stored.key.base != base:
            return None
        report = stored.value
        # Red is red: the branch's own tests red at the head are counted whatever the baseline was.
        red_own = len(report.baseline.own_red)
        if report.baseline.status != "green":
            return Evidence("broken", why=f"baseline {report.baseline.status}" + (
                f": {report.baseline.reason[:80]}" if report.baseline.reason else ""), red_own=red_own)
        verdicts: list[str] = [r.verdict for r in report.results if r.verdict not in UNGRADED]
        verdicts += [g.verdict for r in report.results for g in r.guards if g.verdict not in UNGRADED]
        counts: dict[str, int] = {}
        contradicted = 0
        config = False
        found = store.newest("findings", StoredFindings, repo=repo, head=head)
        if found is not None and found.key.base == base:
            for f in found.value.findings:
                counts[f.severity] = counts.get(f.severity, 0) + 1
                contradicted += f.kind == "claim-contradicted"
                config = config or f.kind == "config-changed"
            red_own = max(red_own, sum(f.kind == "test-red-at-head" for f in found.value.findings))
        return Evidence("ready", bites=sum(v in BITES for v in verdicts), total=len(verdicts),
                        toothless=sum(v in TOOTHLESS for v in verdicts), findings=counts,
                        contradicted=contradicted, config_changed=config, red_own=red_own)

    return evidence_for
