"""The evidence a recorded verdict carries: a record per kind (bites and their guards,
kept probes, comments, findings, the per-test truth table), as shown at verdict time.

Plain frozen records, below the `Review` that holds them (model.py) and light to
import: the review state and the UI build them without loading the note model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GuardRecord:
    """One guard revert inside a hunk (see core/bite/guards.py), as graded at verdict time."""

    line: int
    """1-based line in the branch's file."""
    kind: str
    """condition | operand | boundary | early-exit | statement | body."""
    description: str
    """What the edit did."""
    verdict: str
    """The bite verdict for the guard (`toothless` is the evidence worth keeping)."""
    failing_tests: tuple[str, ...] = ()
    """Tests that failed with the guard reverted."""


@dataclass(frozen=True)
class BiteRecord:
    """The bite check of one hunk, as shown at verdict time."""

    file: str
    """Path of the file the hunk is in."""
    header: str
    """The hunk header, e.g. `@@ -4,6 +4,8 @@`."""
    verdict: str
    """The bite verdict for the hunk (the bite module's word)."""
    failing_tests: tuple[str, ...] = ()
    """Tests that failed with the hunk reverted."""
    guards: tuple[GuardRecord, ...] = ()
    """The hunk's guard reverts, when they were checked (`[[review.bite.guards]]`)."""

    @classmethod
    def from_result(cls, r: Any) -> "BiteRecord":
        """The record of a bite module HunkResult (its guards included)."""
        guards = tuple(
            GuardRecord(g.line, g.kind, g.description, g.verdict, tuple(g.failing_tests))
            for g in getattr(r, "guards", ()) or ()
        )
        return cls(r.file, r.header, r.verdict, tuple(r.failing_tests), guards)


@dataclass(frozen=True)
class ProbeRecord:
    """A probe the reviewer kept, with its last outcomes."""

    name: str
    """The probe's name."""
    code: str
    """The probe's source code."""
    branch: str = ""
    """Outcome on the branch head (e.g. `pass`, `fail`); empty if not run."""
    base: str = ""
    """Outcome on the base; empty if not run."""


@dataclass(frozen=True)
class CommentRecord:
    """A reviewer's comment on a hunk or one of its lines."""

    file: str
    """Path of the file commented on."""
    header: str
    """Header of the hunk commented on."""
    line: int | None
    """New-side line number, or None for a comment on the whole hunk."""
    text: str
    """The comment."""


@dataclass(frozen=True)
class FindingRecord:
    """A finding shown to the reviewer at verdict time."""

    kind: str
    """The finding kind (a contract word of the findings module)."""
    message: str
    """The finding's one-line message."""


@dataclass(frozen=True)
class TestRecord:
    """One row of the per-test truth table at verdict time (`[[review.test]]`)."""

    __test__ = False  # not a pytest test class, whatever its name

    id: str
    """The test's node id (parametrized cases by id)."""
    change: str
    """`added`, `changed`, or `unchanged` for an old test the branch turned red."""
    head: str
    """Its outcome at the head: passes | fails | errors | skipped | not-run."""
    base: str
    """Its outcome on the base commit's source with the branch's tests (same words)."""
