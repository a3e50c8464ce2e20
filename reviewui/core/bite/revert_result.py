"""RevertResult: what every graded revert run found, a hunk's (report.HunkResult) or a guard's
(guard_report.GuardResult).

The two results differ in what was reverted (a hunk: its header and text; a
guard: its line, kind and edit) and share how the run went: the tests that
bit and their first failure lines, why the verdict, how long, the capped
output, what ran, whether the grade is fresh or reused, a witness search.
Those fields are keyword-only here, so each result keeps its own positional
fields first (`HunkResult(file, index, header, text, verdict)`). Each result
keeps its own JSON, whose keys are a contract (docs/REFERENCE.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reviewui.core.witness.model import Witness


@dataclass(frozen=True, kw_only=True)
class RevertResult:
    """How one revert run went, whatever was reverted."""

    failing_tests: tuple[str, ...] = ()
    """Node ids of the tests that failed with the revert applied (the ones that bit)."""
    messages: dict[str, str] = field(default_factory=dict, hash=False)
    """Node id -> first line of its failure message."""
    reason: str = ""
    """Why this verdict, in one line (empty for a plain bite or toothless)."""
    seconds: float = 0.0
    """How long the revert run took (0 when nothing was run)."""
    output: str = ""
    """The capped output of the revert run (head and tail)."""
    tests_run: tuple[str, ...] = ()
    """What was run: node ids (coverage-guided), test files, or () for the whole selection."""
    run_readers: tuple[str, ...] = ()
    """Node ids of the tests that read the changed file as data in this run itself (origin plugin):
    their failures are no bites, whatever the baseline saw (source_readers.py)."""
    evidence: str = "fresh"
    """`fresh` (graded by this sweep) or `reused` (an earlier sweep's grade, nothing it depends on
    changed since: core/bite/reuse.py)."""
    witness: Witness | None = None
    """A toothless result's witness search (`--witness`): found, none in N tries, or why none; else None."""
