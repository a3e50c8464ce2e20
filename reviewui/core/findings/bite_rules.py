"""`toothless-hunk`, `broken-hunk` and `baseline-red`, from a bite sweep.

The sweep reverts one source hunk at a time and reruns the tests: a hunk
whose revert leaves every test passing is not tested by anything, and a
branch whose own suite is not green has nothing to bite with.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from reviewui.core.findings.model import Finding, finding

if TYPE_CHECKING:
    from reviewui.core.bite.report import BiteReport

_HEADER = re.compile(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
TOOTHLESS = ("toothless", "uncovered")
UNGRADED = ("broken", "timeout", "error")
UNCOVERED_WORDS = {
    "selected": "no selected test runs it (the rest of the suite was not searched)",
    "suite": "no test in the suite runs it",
    "": "no test covers it",
}
"""An uncovered hunk's words by the scope searched for its tests (HunkResult.scope)."""


def bite_findings(bite: BiteReport | None) -> list[Finding]:
    """Return the findings of a bite run (none without one)."""
    if bite is None:
        return []
    out: list[Finding] = []
    baseline = bite.baseline
    status = baseline.status
    if status != "green":
        failing = baseline.failing_tests
        reason = baseline.reason
        what = {
            "red": f"{len(failing)} test(s) fail at the branch head",
            "broken": "the test run is broken at the branch head (nothing could be collected or run)",
            "timeout": "the test run timed out at the branch head",
        }.get(status, f"the baseline is {status}")
        out.append(
            finding(
                "baseline-red",
                f"the branch's suite is not green: {what}" + (f" ({reason})" if reason else ""),
                evidence="\n".join(failing[:20]),
            )
        )
    for r in bite.results:
        verdict = r.verdict
        line = _new_start(r.header)
        header = r.header
        reason = r.reason
        if verdict in TOOTHLESS:
            detail = UNCOVERED_WORDS.get(r.scope, UNCOVERED_WORDS[""]) if verdict == "uncovered" \
                else "every test still passes"
            if r.witness is not None and r.witness.searched:
                detail += f"; {r.witness.words()}"
            out.append(
                finding(
                    "toothless-hunk",
                    f"reverting hunk {r.index + 1} of {r.file} {header}: {detail}",
                    file=r.file,
                    line=line,
                    evidence=(r.text or header)[:2000],
                )
            )
        elif verdict in UNGRADED:
            out.append(
                finding(
                    "broken-hunk",
                    f"reverting hunk {r.index + 1} of {r.file} {header} could not be graded ({verdict})"
                    + (f": {reason}" if reason else ""),
                    file=r.file,
                    line=line,
                    evidence=(r.text or header)[:2000],
                )
            )
    return out


def _new_start(header: str) -> int | None:
    m = _HEADER.search(header or "")
    if not m:
        return None
    start = int(m.group(1))
    return start if start > 0 else 1
