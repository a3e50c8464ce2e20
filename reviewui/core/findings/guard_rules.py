"""`toothless-guard` and its finer grades, from a bite sweep that graded guard reverts (`check --bite`).

A guard revert breaks one condition, early exit or statement the agent
wrote; when every test still passes, nothing checks that piece of logic.
With witnesses looked for (core/witness/): `toothless-guard-with-witness`
when a call is known on which the guard matters (a case no test checks),
`toothless-guard-no-witness` when none was found in the search's tries
(likely equivalent: the revert may change nothing anyone can see), and
plain `toothless-guard` when no search could be made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewui.core.findings.model import Finding, finding

if TYPE_CHECKING:
    from reviewui.core.bite.report import BiteReport


def guard_findings(bite: "BiteReport | None") -> list[Finding]:
    """One finding per toothless guard of a bite sweep that graded guards (none without one), its kind
    by what the witness search found."""
    if bite is None:
        return []
    out: list[Finding] = []
    for r in bite.results:
        for g in r.guards:
            if g.verdict != "toothless":
                continue
            tests = ", ".join(g.tests_run) or "every selected test"
            w = g.witness
            kind = "toothless-guard" if w is None or not w.searched else \
                "toothless-guard-with-witness" if w.found else "toothless-guard-no-witness"
            said = f"; {w.words()}" if w is not None and w.searched else ""
            test = f"\n{w.test}" if w is not None and w.found else ""
            out.append(finding(
                kind,
                f"{g.file}:{g.line}: {g.description} — every test still passes{said}",
                file=g.file,
                line=g.line,
                evidence=f"{g.kind}: {g.replacement}\nstill passing: {tests}{test}"[:2000],
            ))
    return out
