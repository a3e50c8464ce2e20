"""The evidence ledger: everything learned about one review, and what it says about a hunk or a file.

One ledger per review session. The UI's controllers and the headless
commands add to it (the baseline and each hunk's bite result, findings,
hunk <-> turn links); the reviewer's marks, comments and kept probes are
read through the ReviewState it holds. It answers "what is known about
this hunk / this file", builds the hunk x test matrix, and is the only
builder of the evidence a verdict records, so the UI and `reviewui verdict`
cannot drift apart.

The ledger is not thread-safe: the UI touches it on its own thread only
(workers post messages, handlers add to it); a headless command is one thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from reviewui.core.hunks import Hunk
from reviewui.core.findings.model import Finding
from reviewui.core.state import HunkComment, KeptProbe, ReviewState

if TYPE_CHECKING:
    # Loaded when bites or a verdict first need them, not before the first screen.
    from reviewui.core.bite.report import Baseline, BiteReport, HunkResult
    from reviewui.core.bite.truth_table import TruthTable
    from reviewui.core.store.key import StoredEvidence
    from reviewui.core.notes.model import Review
    from reviewui.core.notes.records import BiteRecord, CommentRecord, FindingRecord, ProbeRecord, TestRecord
    from reviewui.core.notes.view import ForeignText
    from reviewui.core.transcript.linking import HunkLinks

MAX_TEST_RECORDS = 500
"""Truth-table rows a verdict's note carries at most (a note is read by every later review)."""

HunkKey = tuple[str, int]
"""(file, hunk index), as Hunk.key."""


@dataclass(frozen=True)
class HunkEvidence:
    """What is known about one hunk right now."""

    key: HunkKey
    """(file, hunk index)."""
    bite: HunkResult | None
    """Its bite result, None when it was not bite-checked."""
    reviewed: bool
    """The reviewer marked it and it has not changed since."""
    findings: tuple[Finding, ...]
    """Findings whose line falls inside the hunk."""
    turns: tuple[int, ...] | None
    """Transcript turns that wrote it; () when none did; None when no transcript is linked."""
    comments: tuple[HunkComment, ...]
    """The reviewer's comments on it."""

    @property
    def worst_severity(self) -> str | None:
        """`error` when any finding is an error, `warning` when any finding at all, else None."""
        if not self.findings:
            return None
        return "error" if any(f.severity == "error" for f in self.findings) else "warning"


@dataclass(frozen=True)
class FileEvidence:
    """What is known about one changed file right now."""

    path: str
    """The file's path (branch side)."""
    bite_counts: tuple[tuple[str, int], ...]
    """(bite verdict, how many of its hunks got it), in the bite module's verdict order, zeros left out."""
    findings: tuple[Finding, ...]
    """Findings on the file."""
    reviewed: int | None
    """Hunks marked reviewed; None while its hunks are not parsed yet."""
    hunks: int
    """Number of hunks (0 while not parsed)."""


@dataclass(frozen=True)
class MatrixData:
    """The hunk x test matrix: rows, columns and the cells where a test bit a hunk."""

    hunks: tuple[tuple[str, str], ...]
    """(row key `file:index`, row label `file:index verdict`), in file then index order."""
    tests: tuple[str, ...]
    """Test node ids that ran at a baseline, in first-seen order."""
    bit: frozenset[tuple[str, str]]
    """(row key, test) where the test failed with the hunk reverted and the hunk bites."""


HistoryRow = tuple["Review", str, str]
"""An earlier verdict: (the review, shown as whom; its relation to the head now; its signature in words)."""


@dataclass(frozen=True)
class HistoryView:
    """The branch's verdicts as the verdict relation weighs them (core/notes/relation.py), for the app."""

    rows: tuple[HistoryRow, ...] = ()
    """Every review, oldest first; one that does not count says so in its signature words."""
    counted: tuple[HistoryRow, ...] = ()
    """The reviews that count: what may stand for or against a verdict recorded now."""
    verdict: HistoryRow | None = None
    """The branch's verdict now, or None when no review counts."""
    foreign: tuple["ForeignText", ...] = ()
    """Text of those notes that is no review, shown apart."""
    self_review: str = ""
    """One line when the reviewer's identity is the head commit's author (a verdict on their own work), else ""."""


@dataclass(frozen=True)
class VerdictEvidence:
    """The evidence a verdict records (the keyword arguments of Review.new)."""

    bites: tuple[BiteRecord, ...] = ()
    """Bite results, in file then hunk order."""
    probes: tuple[ProbeRecord, ...] = ()
    """Kept probes with their last outcomes."""
    comments: tuple[CommentRecord, ...] = ()
    """The reviewer's hunk comments."""
    findings: tuple[FindingRecord, ...] = ()
    """The findings known at verdict time."""
    tests: tuple[TestRecord, ...] = ()
    """The per-test truth table's rows (new and changed tests, then regressions)."""


@dataclass
class EvidenceLedger:
    """Everything learned about one review so far (see the module docstring)."""

    state: ReviewState
    """The reviewer's marks, comments and kept probes (saved outside the repository)."""
    baseline: Baseline | None = None
    """The latest baseline run, None before any bite-check."""
    baseline_tests: list[str] = field(default_factory=list)
    """Every test that ran at a baseline, first-seen order (the matrix columns)."""
    bites: dict[HunkKey, HunkResult] = field(default_factory=dict)
    """Latest bite result per hunk."""
    report: BiteReport | None = None
    """The latest finished bite run (bite findings are computed from it)."""
    findings: list[Finding] = field(default_factory=list)
    """The findings computed so far."""
    findings_ready: bool = False
    """True once findings were computed at least once."""
    links: HunkLinks | None = None
    """Hunk <-> transcript turn links, None until a transcript is linked."""
    truth_table: TruthTable | None = None
    """The per-test truth table (branch tests at the head and on the base), None until made."""
    stored: StoredEvidence | None = None
    """What the evidence store held when the review opened (shown with its age, stale or current)."""
    from_store: bool = False
    """True while the bite results are the stored ones (no sweep has run in this review yet)."""

    # --- adding evidence -------------------------------------------------

    def add_bite(self, result: HunkResult) -> None:
        """Record one hunk's bite result (replacing an earlier one; a cancelled run never does)."""
        if result.verdict == "skipped" and result.reason == "cancelled" and result.key in self.bites:
            return
        self.bites[result.key] = result

    def add_report(self, report: BiteReport) -> None:
        """Record a finished bite run: its baseline, the tests it ran and every result."""
        self.report = report
        self.from_store = False
        if not (report.baseline.reason == "cancelled" and self.baseline is not None):
            self.baseline = report.baseline  # a cancelled baseline says nothing: the earlier one stands
        for t in report.baseline.tests:
            if t not in self.baseline_tests:
                self.baseline_tests.append(t)
        for r in report.results:
            self.add_bite(r)

    def add_truth_table(self, table: TruthTable) -> None:
        """Record the per-test truth table (replacing an earlier one; a cancelled one never does)."""
        if table.reason == "cancelled" and self.truth_table is not None:
            return
        self.truth_table = table

    def add_stored(self, stored: StoredEvidence) -> None:
        """Record what the store held; its current sweep and table become the ledger's, a stale one never does."""
        self.stored = stored
        if stored.bite is not None and stored.bite.current:
            self.add_report(stored.bite.value)
            self.from_store = True
            if stored.table is not None and stored.table.current:
                self.add_truth_table(stored.table.value)

    def stored_words(self) -> str | None:
        """The header's word on stored evidence: its age and whether it is current; None when there is none
        or a sweep of this review has replaced it."""
        if self.stored is None or (self.report is not None and not self.from_store):
            return None
        return self.stored.words()

    def set_findings(self, findings: Sequence[Finding]) -> None:
        """Replace the findings with a fresh computation."""
        self.findings = list(findings)
        self.findings_ready = True

    def set_links(self, links: HunkLinks) -> None:
        """Record the hunk <-> turn links of the transcript."""
        self.links = links

    # --- what is known ---------------------------------------------------

    def is_reviewed(self, hunk: Hunk) -> bool:
        """True when the reviewer marked `hunk` and it has not changed since."""
        return self.state.is_marked(hunk.file, hunk.header, hunk.text)

    def probes(self) -> list[KeptProbe]:
        """The kept probes."""
        return self.state.probes()

    def hunk(self, hunk: Hunk) -> HunkEvidence:
        """What is known about `hunk`."""
        turns: tuple[int, ...] | None = None
        if self.links is not None:
            turns = tuple(self.links.turns_for(hunk.file, hunk.index))
        return HunkEvidence(
            key=hunk.key,
            bite=self.bites.get(hunk.key),
            reviewed=self.is_reviewed(hunk),
            findings=tuple(f for f in self.findings if f.file == hunk.file and hunk.contains(f.line)),
            turns=turns,
            comments=tuple(c for c in self.state.comments(hunk.file) if c.header == hunk.header),
        )

    def file(self, path: str, hunks: Sequence[Hunk] | None) -> FileEvidence:
        """What is known about file `path`; `hunks` is its parsed hunks, or None when not parsed yet."""
        verdicts: list[str] = [r.verdict for (p, _), r in self.bites.items() if p == path]
        counts: tuple[tuple[str, int], ...] = ()
        if verdicts:  # a bite was recorded, so its module is loaded
            from reviewui.core.bite.report import VERDICTS

            counts = tuple((v, verdicts.count(v)) for v in VERDICTS if verdicts.count(v))
        return FileEvidence(
            path=path,
            bite_counts=counts,
            findings=tuple(f for f in self.findings if f.file == path),
            reviewed=None if hunks is None else sum(1 for h in hunks if self.is_reviewed(h)),
            hunks=0 if hunks is None else len(hunks),
        )

    def bite_results(self) -> list[HunkResult]:
        """The bite results so far, in file then hunk order."""
        return [self.bites[k] for k in sorted(self.bites)]

    def matrix(self) -> MatrixData:
        """The hunk x test matrix of the bite results so far."""
        rows: list[tuple[str, str]] = []
        bit: set[tuple[str, str]] = set()
        for r in self.bite_results():
            key = f"{r.file}:{r.index}"
            rows.append((key, f"{key} {r.verdict}"))
            if r.verdict == "bites":
                bit.update((key, t) for t in r.failing_tests)
            for n, g in enumerate(r.guards):  # a row per guard revert, under its hunk
                guard_key = f"{key}#{n}"
                rows.append((guard_key, f"  ↳ {g.file}:{g.line} {g.kind} {g.verdict}"))
                if g.verdict == "bites":
                    bit.update((guard_key, t) for t in g.failing_tests)
        return MatrixData(tuple(rows), tuple(self.baseline_tests), frozenset(bit))

    def against(self, verdict: str, history: Sequence[HistoryRow] = (),
                hunks: Sequence[Hunk] | None = None) -> list[str]:
        """What stands against recording `verdict` now, one plain line each (empty: nothing does).

        Against an approve: kept probes that fail on the branch, hunks and guards
        no test notices reverted, error findings, an earlier reject, and (given
        every hunk of the branch as `hunks`) hunks not marked reviewed. Against a
        reject: an earlier approve of this patch, bite-checks where every checked
        hunk bites with no error finding standing, kept probes that pass on the branch.
        """
        from reviewui.core.probe.run import outcome_words

        probes = self.probes()
        results = self.bite_results()
        errors = [f for f in self.findings if f.severity == "error"]
        if verdict == "approve":
            out = [f"kept probe {p.name} {outcome_words(p.outcomes)}" for p in probes
                   if p.outcomes.get("branch") in ("failed", "error", "timeout")]
            for r in results:
                if r.verdict in ("toothless", "uncovered"):
                    out.append(f"{r.file} {r.header} is {r.verdict}: no test notices it reverted")
                out += [f"{g.file}:{g.line} {g.kind} guard is {g.verdict}: no test notices it reverted"
                        for g in r.guards if g.verdict in ("toothless", "uncovered")]
            out += [f"error finding {f.kind}: {f.message}" for f in errors]
            if self.baseline is not None and self.baseline.quarantined:
                out.append(_quarantine_line(self.baseline.quarantined))
            out += [f"an earlier reject by {_who(r)} ({rel.replace('-', ' ')})" for r, rel, _ in history
                    if r.verdict == "reject"]
            unreviewed = [h for h in hunks or () if not self.is_reviewed(h)]
            if unreviewed:
                n = len(hunks or ())
                out.append(f"{len(unreviewed)} of {n} hunk{'s' if n != 1 else ''} not marked reviewed "
                           f"(space marks one)")
            return out
        if verdict != "reject":
            return []
        out = [f"an earlier approve by {_who(r)} ({rel.replace('-', ' ')})" for r, rel, _ in history
               if r.verdict == "approve" and rel in ("this-head", "same-patch")]
        checked = [r for r in results if r.verdict not in ("not-code", "skipped")]
        guards_hold = all(g.verdict not in ("toothless", "uncovered") for r in checked for g in r.guards)
        if checked and all(r.verdict == "bites" for r in checked) and guards_hold and not errors:
            n = len(checked)
            out.append(f"the evidence so far supports the branch: {n} of {n} hunk{'s' if n != 1 else ''} "
                       f"bite{'' if n != 1 else 's'}, no error finding")
        out += [f"kept probe {p.name} {outcome_words(p.outcomes)}" for p in probes
                if p.outcomes.get("branch") == "passed"]
        return out

    def verdict_evidence(self) -> VerdictEvidence:
        """The evidence a verdict recorded now would carry (the one builder of it)."""
        from reviewui.core.notes.records import BiteRecord, FindingRecord, TestRecord

        table = self.truth_table
        rows = [*table.tests, *table.regressions] if table is not None and table.status == "complete" else []
        return VerdictEvidence(
            bites=tuple(BiteRecord.from_result(r) for r in self.bite_results()),
            probes=self.state.probe_records(),
            comments=self.state.comment_records(),
            findings=tuple(FindingRecord(f.kind, f.message) for f in self.findings),
            tests=tuple(TestRecord(t.id, t.change, t.head, t.base) for t in rows[:MAX_TEST_RECORDS]),
        )


def _quarantine_line(tests: Sequence[str]) -> str:
    """What an approve should know of tests red at the head: no hunk was graded by them."""
    n = len(tests)
    shown = ", ".join(tests[:3]) + (f" and {n - 3} more" if n > 3 else "")
    return f"{n} test{'s' if n != 1 else ''} red at the head quarantined (graded nothing): {shown}"


def _who(review: Review) -> str:
    """The reviewer's name without the email (an unverified claim keeps its label)."""
    return review.reviewer.split(" <")[0]
