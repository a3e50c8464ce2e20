"""The outcome of one guard revert and its renderings (JSON, text, Stryker mutant).

Kept apart from report.py so hunks and guards each have one owner; report.py
only calls in here when a report carries guards (`reviewui bite --guards`).
The JSON keys (`line`, `kind`, `description`, `verdict`, `failing_tests`,
`reason`, `seconds`) are a contract.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from reviewui.core.bite.revert_result import RevertResult


GUARD_VERDICTS: tuple[str, ...] = ("bites", "toothless", "uncovered", "broken", "timeout", "error", "skipped")

# Stryker statuses as the issue names them for guards (a guard that cannot be graded is a CompileError there).
GUARD_STRYKER: dict[str, str] = {
    "bites": "Killed",
    "toothless": "Survived",
    "uncovered": "NoCoverage",
    "broken": "CompileError",
    "timeout": "Timeout",
    "error": "RuntimeError",
    "skipped": "Ignored",
}

PHRASE = {
    "bites": "bites",
    "toothless": "every test still passes",
    "uncovered": "no test executes this line",
    "broken": "broken (the tests could not be graded)",
    "timeout": "timed out",
    "error": "could not be run",
    "skipped": "skipped",
}
"""What a verdict means, said after a guard's description."""


@dataclass(frozen=True)
class GuardResult(RevertResult):
    """The verdict on one guard revert (how its run went: RevertResult's fields)."""

    file: str
    """Path of the file."""
    hunk: int
    """0-based index of the hunk the guard belongs to."""
    line: int
    """1-based line in the branch's file."""
    kind: str
    """One of guards.GUARD_KINDS."""
    description: str
    """What the edit does."""
    verdict: str
    """bites | toothless | uncovered | broken | timeout | error | skipped."""
    start: tuple[int, int] = (0, 0)
    """(line, column) where the edit starts, 1-based."""
    end: tuple[int, int] = (0, 0)
    """(line, column) just past the edited code, 1-based."""
    replacement: str = ""
    """The code put in place of the original."""

    @property
    def key(self) -> tuple[str, int]:
        """(file, hunk): the hunk this guard is attached to."""
        return (self.file, self.hunk)

    def one_line(self) -> str:
        """`line 57: <description> — <what the verdict means>` (plus the tests that bit)."""
        said = PHRASE.get(self.verdict, self.verdict)
        if self.verdict == "bites" and self.failing_tests:
            said = "bites: " + ", ".join(self.failing_tests)
        if self.witness is not None:
            said += f"; {self.witness.words()}"
        return f"line {self.line}: {self.description} — {said}"

    def to_json(self) -> dict[str, Any]:
        """The contract entry of `hunks[].guards`."""
        return {
            "line": self.line,
            "kind": self.kind,
            "description": self.description,
            "verdict": self.verdict,
            "failing_tests": list(self.failing_tests),
            "reason": self.reason,
            "seconds": round(self.seconds, 3),
            "evidence": self.evidence,
            **({"witness": self.witness.to_json()} if self.witness is not None else {}),
        }

    def to_mutant(self, ident: str) -> dict[str, Any]:
        """This guard as a mutation-testing-elements mutant."""
        mutant: dict[str, Any] = {
            "id": ident,
            "mutatorName": self.kind,
            "replacement": self.replacement,
            "location": {"start": {"line": self.start[0], "column": self.start[1]},
                         "end": {"line": self.end[0], "column": self.end[1]}},
            "status": GUARD_STRYKER[self.verdict],
            "description": self.description,
        }
        if self.reason:
            mutant["statusReason"] = self.reason
        if self.verdict == "bites":
            mutant["killedBy"] = list(self.failing_tests)
        if self.tests_run:
            mutant["coveredBy"] = list(self.tests_run)
        if self.witness is not None:
            mutant["witness"] = self.witness.to_json()
            mutant["statusReason"] = f"{self.reason + '; ' if self.reason else ''}{self.witness.words()}"
        return mutant


def guard_summary(guards: Iterable[GuardResult]) -> dict[str, int]:
    """Count of guards per verdict (every verdict word present)."""
    counts = dict.fromkeys(GUARD_VERDICTS, 0)
    for g in guards:
        counts[g.verdict] += 1
    return counts
