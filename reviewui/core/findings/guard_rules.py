"""`toothless-guard`, from a bite sweep that graded guard reverts (`check --bite`).

A guard revert breaks one condition, early exit or statement the agent
wrote; when every test still passes, nothing checks that piece of logic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewui.core.findings.model import Finding, finding

if TYPE_CHECKING:
    from reviewui.core.bite.report import BiteReport


def guard_findings(bite: "BiteReport | None") -> list[Finding]:
    """One warning per toothless guard of a bite sweep that graded guards (none without one)."""
    if bite is None:
        return []
    out: list[Finding] = []
    for r in bite.results:
        for g in r.guards:
            if g.verdict != "toothless":
                continue
            tests = ", ".join(g.tests_run) or "every selected test"
            out.append(finding(
                "toothless-guard",
                f"{g.file}:{g.line}: {g.description} — every test still passes",
                file=g.file,
                line=g.line,
                evidence=f"{g.kind}: {g.replacement}\nstill passing: {tests}"[:2000],
            ))
    return out
