"""The finding record, its severities and the catalogue of finding kinds.

A finding is one thing a green suite cannot tell a reviewer: a rewritten
assertion, a branch that changes nothing, a task identifier the code never
gains, a function nobody calls. Kinds and default severities are a contract
shared by the UI, `reviewui check` (JSON and SARIF) and the config file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

Severity = Literal["error", "warning", "info"]

SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
"""Most to least serious; also the sort order of findings."""

SEVERITY_RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}


class KindInfo(NamedTuple):
    """What one kind of finding is: its default severity and a one-line description."""

    severity: Severity
    description: str


KINDS: dict[str, KindInfo] = {
    "tests-not-additive": KindInfo(
        "error",
        "An existing test, check, parametrize case or test setting was removed, renamed, "
        "changed, skipped or loosened.",
    ),
    "test-only-change": KindInfo("error", "The branch changes tests (or snapshots) and no source."),
    "no-change": KindInfo("error", "base..head is empty, even if the branch has commits."),
    "task-identifier-missing": KindInfo(
        "error", "The task names an identifier that appears nowhere in the changed files."
    ),
    "uncalled-function": KindInfo(
        "warning", "A function the branch adds that nothing in the repository calls."
    ),
    "test-mentions-only": KindInfo(
        "warning", "Tests import or mention a changed symbol but never call it."
    ),
    "duplicate-function": KindInfo(
        "warning", "A function the branch adds is (nearly) the same as an existing one."
    ),
    "undeclared-write": KindInfo(
        "warning", "The branch changes a file the transcript's TOUCH: lines did not declare."
    ),
    "claimed-done-without-change": KindInfo(
        "error", "The agent claimed it was done while nothing (or not the task) changed."
    ),
    "toothless-hunk": KindInfo("warning", "Reverting this hunk leaves every test passing."),
    "toothless-guard": KindInfo(
        "warning", "Breaking one condition, exit or statement the agent wrote leaves every test passing."
    ),
    "toothless-guard-with-witness": KindInfo(
        "warning", "A toothless guard with a witness: a call on which it matters that no test checks (re-verified)."
    ),
    "toothless-guard-no-witness": KindInfo(
        "info", "A toothless guard with no witness in the search's tries: likely equivalent (its revert may change nothing)."
    ),
    "broken-hunk": KindInfo("info", "Reverting this hunk broke the test run, so it could not be graded."),
    "baseline-red": KindInfo("error", "The branch's own test suite does not pass."),
    "config-changed": KindInfo(
        "error", "The branch changes reviewui's own config; the changes are ignored unless the reviewer accepts them."
    ),
    "claim-contradicted": KindInfo(
        "error", "The agent reported green (or that the tests pass), and its own test command is red at the head."
    ),
    "claim-unverifiable": KindInfo("info", "A test command the agent ran cannot be rerun here (with why)."),
    "claim-confirmed": KindInfo("info", "The agent's test command, rerun at the head, agrees with what it reported."),
    "claim-without-run": KindInfo("warning", "The agent says the tests pass but its transcript runs none."),
    "test-red-at-head": KindInfo(
        "error", "A test the branch adds or changes fails at the branch head (red is red: never quarantined)."
    ),
    "test-passes-on-base": KindInfo(
        "warning", "A new or changed test passes on the base commit's source: it needs nothing of the change."
    ),
    "test-only-notices-name": KindInfo(
        "info", "A new or changed test fails on the base only because a name the branch adds is missing while "
        "importing or collecting; the guards say more."
    ),
    "not-analysed": KindInfo(
        "warning", "A changed file is over the analysis caps (size or nesting), so no other rule read it."
    ),
    "symlink-outside-tree": KindInfo(
        "warning", "The branch adds a symlink pointing out of the repository (checked in as a link, never followed)."
    ),
    "bidi-control": KindInfo(
        "error", "A source hunk adds bidirectional-text or invisible characters (Trojan Source)."
    ),
    "report-tampering": KindInfo(
        "error", "The branch adds or changes code that can rewrite test reports (a reporting hook, sys.excepthook)."
    ),
    "test-reads-changed-source": KindInfo(
        "warning", "A test reads a changed source file as data (a pinned hash, its text, its bytecode), not by importing it: "
        "its failures are no bites of that file's hunks."
    ),
}
"""Every finding kind -> (default severity, one-line description)."""


@dataclass(frozen=True)
class Finding:
    """One check a green suite cannot make, with the lines that prove it."""

    kind: str
    """Stable kind, a key of KINDS (e.g. `tests-not-additive`)."""
    severity: Severity
    """`error`, `warning` or `info`."""
    file: str | None
    """Repository-relative path (branch side), or None for the branch as a whole."""
    line: int | None
    """1-based line on the branch side (base side when the line is gone), or None."""
    symbol: str | None
    """The function, test or identifier concerned, when there is one."""
    message: str
    """One line saying what is wrong."""
    evidence: str = ""
    """The lines involved (may span several lines)."""

    def to_json(self) -> dict[str, Any]:
        """Return the contract form used by `reviewui check --format json`."""
        return {
            "kind": self.kind,
            "severity": self.severity,
            "file": self.file,
            "line": self.line,
            "symbol": self.symbol,
            "message": self.message,
            "evidence": self.evidence,
        }

    @property
    def location(self) -> str:
        """`file:line`, `file`, or "" for a branch-wide finding."""
        if self.file is None:
            return ""
        return f"{self.file}:{self.line}" if self.line else self.file


def finding(
    kind: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    symbol: str | None = None,
    evidence: str = "",
    severity: Severity | None = None,
) -> Finding:
    """Return a Finding of `kind` at its default severity unless `severity` is given.

    Raises KeyError for a kind that is not in KINDS (a bug, not user input).
    """
    sev = severity if severity is not None else KINDS[kind].severity
    return Finding(kind, sev, file, line, symbol, " ".join(message.split()), evidence)


def sort_key(f: Finding) -> tuple[int, str, int, str, str, str]:
    """Severity first, then branch-wide before per-file, then file and line."""
    return (
        SEVERITY_RANK.get(f.severity, len(SEVERITIES)),
        f.file or "",
        f.line or 0,
        f.kind,
        f.symbol or "",
        f.message,
    )
