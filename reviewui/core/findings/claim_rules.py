"""`claim-without-run`: the agent says the tests pass, and its transcript runs none (no test run needed).

The claims that need a rerun (`claim-contradicted`, `-confirmed`, `-unverifiable`) come from
`core/claims/verify.py` when the caller runs the agent's test commands (`check --bite`,
`reviewui claims`, `queue --sweep`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewui.core.findings.model import Finding

if TYPE_CHECKING:
    from reviewui.core.transcript.model import Transcript


def claim_without_run(transcript: Transcript | None) -> list[Finding]:
    """A final green claim with no test run anywhere in the transcript (none without a transcript)."""
    if transcript is None:
        return []
    from reviewui.core.claims.extract import extract_claims
    from reviewui.core.claims.findings import claim_findings
    from reviewui.core.claims.verify import judge

    return claim_findings([c for c in judge(extract_claims(transcript), {}) if c.outcome == "without-run"])
