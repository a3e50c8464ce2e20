"""`test-red-at-head`: a test the branch adds or changes fails at the branch's own head.

Red is red. An old test red at the head says nothing about the change and is
quarantined (left out of the runs that grade hunks); the branch's own new or
changed test failing there is what the change claims to make work, so it is
never quarantined silently: it is an error, named with its first error line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewui.core.findings.model import Finding, finding

if TYPE_CHECKING:
    from reviewui.core.bite.report import BiteReport
    from reviewui.core.bite.truth_table import TruthTable


def test_red_at_head(bite: BiteReport | None, table: TruthTable | None = None) -> list[Finding]:
    """One error per new or changed test (case) red at the head: from the sweep's baseline, and
    from the truth table's rows the baseline did not name."""
    out: dict[str, Finding] = {}
    if bite is not None:
        b = bite.baseline
        for t in b.own_red:
            out[t] = _red(t, t.split("::", 1)[0], None, b.messages.get(t, ""))
    if table is not None and table.status == "complete":
        for r in table.tests:
            if r.change != "unchanged" and r.head in ("fails", "errors") and r.id not in out:
                out[r.id] = _red(r.id, r.file, r.line or None, r.head_message)
    return list(out.values())


def _red(test: str, file: str, line: int | None, message: str) -> Finding:
    return finding(
        "test-red-at-head",
        f"{test}, a test the branch adds or changes, fails at the branch head"
        + (f": {message[:200]}" if message else ""),
        file=file, line=line, symbol=test, evidence=message[:2000],
    )


test_red_at_head.__test__ = False  # type: ignore[attr-defined]  # pytest would collect it from an importer
