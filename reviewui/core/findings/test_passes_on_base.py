"""`test-passes-on-base`: a new or changed test that passes on the base commit's source.

Such a test needs nothing of the change: run against the code before the
branch, it is already green, so it cannot be what shows the change works.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewui.core.findings.model import Finding, finding

if TYPE_CHECKING:
    from reviewui.core.bite.truth_table import TruthTable


def test_passes_on_base(table: TruthTable | None) -> list[Finding]:
    """One warning per added or changed test (case) that passes both at the head and on the base."""
    if table is None or table.status != "complete":
        return []
    return [
        finding(
            "test-passes-on-base",
            f"{t.id} ({t.change}) passes on the base commit too: it needs nothing of the change",
            file=t.file, line=t.line or None, symbol=t.id,
        )
        for t in table.tests if t.base == "passes" and t.head == "passes"
    ]
