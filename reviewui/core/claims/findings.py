"""`claim-contradicted`, `claim-unverifiable`, `claim-confirmed` and `claim-without-run`, from claim checks."""

from __future__ import annotations

from typing import Sequence

from reviewui.core.claims.verify import ClaimCheck
from reviewui.core.findings.model import Finding, finding

KIND_OF = {"contradicted": "claim-contradicted", "unverifiable": "claim-unverifiable",
           "confirmed": "claim-confirmed", "without-run": "claim-without-run"}


def claim_findings(checks: Sequence[ClaimCheck]) -> list[Finding]:
    """One finding per checked claim, naming its turn."""
    out: list[Finding] = []
    for check in checks:
        c = check.claim
        what = f"turn {c.turn}: {c.text}"
        out.append(finding(KIND_OF[check.outcome], f"{what} — {check.why}", symbol=f"turn {c.turn}",
                           evidence=c.command.text if c.command else c.text))
    return out
