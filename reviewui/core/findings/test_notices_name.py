"""`test-only-notices-name`: a new or changed test that fails on the base only because a name is missing.

An ImportError or NameError on the base says the test imports or calls
something the branch adds, not that it checks what that thing does; which
guard reverts make it fail says more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewui.core.findings.model import Finding, finding

if TYPE_CHECKING:
    from reviewui.core.bite.truth_table import TestRow, TruthTable


def test_only_notices_name(table: TruthTable | None) -> list[Finding]:
    """One info note per added or changed test (case) that errors on the base on a missing name."""
    if table is None or table.status != "complete":
        return []
    return [
        finding(
            "test-only-notices-name",
            f"{t.id} fails on the base commit only because a name is missing ({t.base_message[:200]}); "
            + _guards_say(t),
            file=t.file, line=t.line or None, symbol=t.id,
        )
        for t in table.tests if t.base == "errors" and t.head == "passes"
    ]


def _guards_say(t: TestRow) -> str:
    guards = [b for b in t.bitten_by if b.guard_line is not None]
    if guards:
        return "guard reverts it notices: " + ", ".join(b.words() for b in guards[:5])
    if t.bitten_by:
        return "it notices whole hunks reverted but no guard revert"
    return "no revert makes it fail (run the sweep with guards to see more)"
