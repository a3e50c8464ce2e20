"""The per-test truth table: each test the branch adds or changes, at the head and on the base.

The check every SWE-bench-style harness makes, per test: run the branch's
tests on the base commit's source. A new test that fails there (by an
assertion) tests the change; one that passes there needs nothing of it; one
that only errors there (a missing name, import or attribute) notices a name,
not a behaviour, and the guard reverts say more. The same base run shows the
old tests the branch turned red (green on the base, red at the head), apart
from those already red on the base.

Pure: `build_table` takes the outcomes (the sweep's baseline for the head,
one run for the base, see truth_base.py) and the sweep's results, and says
which hunk reverts and guards make each test fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Literal, Sequence

from reviewui.core.bite.new_names import only_a_new_name_missing
from reviewui.core.bite.report import BiteReport
from reviewui.core.run.junit import TestOutcome

Outcome = Literal["passes", "fails", "errors", "skipped", "not-run"]
"""A test's outcome in one place: `errors` is a name the branch adds or renames missing while importing or
collecting (new_names.py); any other failure `fails`: then the failure is the behaviour."""
Change = Literal["added", "changed", "unchanged"]



@dataclass(frozen=True)
class ChangedTest:
    """A test function the branch adds or changes (from the fixtures analysis)."""

    id: str
    """Node id without parameters, e.g. `tests/test_x.py::TestC::test_y`."""
    change: Change
    """`added` or `changed`."""
    file: str
    """The test file."""
    line: int
    """Line of its `def` at the head."""


@dataclass(frozen=True)
class Bite:
    """A revert that makes a test fail: a whole hunk, or one guard inside it."""

    file: str
    """The source file."""
    hunk: int
    """0-based index of the hunk."""
    guard_line: int | None = None
    """The guard's line (None: the whole hunk reverted)."""
    guard_kind: str = ""
    """The guard's kind (`""` for a hunk)."""

    def words(self) -> str:
        """`src/a.py hunk 2` or `src/a.py:14 condition guard`."""
        if self.guard_line is None:
            return f"{self.file} hunk {self.hunk + 1}"
        return f"{self.file}:{self.guard_line} {self.guard_kind} guard"


@dataclass(frozen=True)
class TestRow:
    """One test (one parametrized case) in the table."""

    __test__ = False  # not a pytest test class, whatever its name

    id: str
    """Node id as pytest reports it (parametrized cases by id)."""
    file: str
    """The test file."""
    line: int
    """Line of its `def` at the head (0 when unknown)."""
    change: Change
    """`added`, `changed` (by the branch) or `unchanged` (an old test)."""
    head: Outcome
    """Its outcome at the branch head."""
    base: Outcome
    """Its outcome on the base commit's source with the branch's tests."""
    base_message: str = ""
    """The first line of its failure or error on the base ("" when it passed)."""
    head_message: str = ""
    """The first line of its failure or error at the head ("" when it passed)."""
    bitten_by: tuple[Bite, ...] = ()
    """The hunk and guard reverts that make it fail, in the sweep's order."""

    def to_json(self) -> dict[str, Any]:
        """The contract entry of `reviewui tests --format json`."""
        return {
            "id": self.id, "file": self.file, "line": self.line, "change": self.change,
            "head": self.head, "base": self.base, "base_message": self.base_message,
            "head_message": self.head_message,
            "bitten_by": [{"file": b.file, "hunk": b.hunk + 1, "guard_line": b.guard_line,
                           "guard_kind": b.guard_kind or None} for b in self.bitten_by],
        }


@dataclass(frozen=True)
class TruthTable:
    """The table for one branch: its new and changed tests, and the old tests it turned red."""

    head: str
    """The head commit."""
    base: str
    """The base commit."""
    status: Literal["complete", "unavailable"]
    """`unavailable` when a side could not be run (see `reason`); the rows are then empty."""
    reason: str = ""
    """Why it is unavailable, or a note on how it was made."""
    tests: tuple[TestRow, ...] = ()
    """Every added or changed test, by file then line, cases in run order."""
    regressions: tuple[TestRow, ...] = ()
    """Old tests green on the base and red at the head."""
    already_red: tuple[str, ...] = ()
    """Old tests red on the base and at the head (not the branch's doing)."""
    base_seconds: float = 0.0
    """How long the base run took."""

    def summary(self) -> dict[str, int]:
        """Counts: tests, fails/errors/passes on base, regressions."""
        base = [t.base for t in self.tests]
        return {"tests": len(self.tests), "fails_on_base": base.count("fails"), "errors_on_base": base.count("errors"),
                "passes_on_base": base.count("passes"), "not_run_on_base": base.count("not-run"),
                "regressions": len(self.regressions)}

    def to_json(self) -> dict[str, Any]:
        """The table part of the `reviewui tests --format json` document."""
        return {
            "status": self.status, "reason": self.reason, "head": self.head, "base": self.base,
            "tests": [t.to_json() for t in self.tests],
            "regressions": [t.to_json() for t in self.regressions],
            "already_red": list(self.already_red),
            "summary": self.summary(),
        }

    def render_text(self) -> str:
        """Plain lines for a terminal (the caller makes them terminal-safe)."""
        lines = [f"per-test truth table ({self.base[:10]}..{self.head[:10]})"]
        if self.status != "complete":
            return "\n".join([*lines, f"unavailable: {self.reason}"]) + "\n"
        if not self.tests:
            lines.append("the branch adds or changes no test")
        for t in self.tests:
            lines.append(f"{t.change:<8} {t.id}")
            lines.append(f"    head {t.head}; base {t.base}" + (f" ({t.base_message})" if t.base_message else ""))
            if t.bitten_by:
                lines.append("    fails with reverted: " + ", ".join(b.words() for b in t.bitten_by))
            elif t.head == "passes":
                lines.append("    no revert makes it fail")
        for t in self.regressions:
            lines.append(f"REGRESSION {t.id}: passes on base, {t.head} at head"
                         + (f" ({t.head_message})" if t.head_message else ""))
        if self.already_red:
            lines.append(f"already red on base (not counted): {', '.join(self.already_red)}")
        s = self.summary()
        lines.append(f"{s['tests']} new or changed test(s): {s['fails_on_base']} fail on base, "
                     f"{s['errors_on_base']} only error, {s['passes_on_base']} pass; {s['regressions']} regression(s)")
        return "\n".join(lines) + "\n"


def function_id(node_id: str) -> str:
    """The test function a node id names: `f.py::test_x[a-1]` -> `f.py::test_x`."""
    return node_id.split("[", 1)[0]


def classify(t: TestOutcome | None, collection: TestOutcome | None = None,
             new_names: Collection[str] = ()) -> tuple[Outcome, str]:
    """(outcome word, first message line) of one run of a test; `collection` is its file's collection
    error. `errors` only when a name of `new_names` (those the branch adds or renames) is what is
    missing while importing or collecting; any other failure is the behaviour: `fails`."""
    if t is None:
        if collection is not None:
            return _failure(collection, True, new_names)
        return "not-run", ""
    if t.outcome == "passed":
        return "passes", ""
    if t.outcome == "skipped":
        return "skipped", t.message
    return _failure(t, False, new_names)


def _failure(t: TestOutcome, collection: bool, new_names: Collection[str]) -> tuple[Outcome, str]:
    missing = only_a_new_name_missing(t, collection, new_names)
    return ("errors" if missing else "fails"), t.message


def head_outcomes(report: BiteReport) -> dict[str, TestOutcome]:
    """The head's outcomes, read from the sweep's baseline run (node id -> outcome)."""
    b = report.baseline
    # Tests red at the head are failing whether they sank the baseline or were left out beside green ones.
    failing = set(b.failing_tests) | set(b.left_out)
    out = {t: TestOutcome(t, "failed" if t in failing else "passed", b.messages.get(t, "")) for t in b.tests}
    for t in (*b.failing_tests, *b.left_out):  # a collection error has no entry in `tests`
        out.setdefault(t, TestOutcome(t, "error", b.messages.get(t, ""), collection="::" not in t))
    return out


def bites_of(report: BiteReport) -> dict[str, list[Bite]]:
    """Node id -> the hunk and guard reverts that made it fail, from the sweep's results."""
    out: dict[str, list[Bite]] = {}
    for r in report.results:
        if r.verdict == "bites":
            for t in r.failing_tests:
                out.setdefault(t, []).append(Bite(r.file, r.index))
        for g in r.guards:
            if g.verdict == "bites":
                for t in g.failing_tests:
                    out.setdefault(t, []).append(Bite(g.file, g.hunk, g.line, g.kind))
    return out


def build_table(
    changed: Sequence[ChangedTest], report: BiteReport, base_run: Sequence[TestOutcome], *,
    head: str, base: str, base_seconds: float = 0.0, new_names: Collection[str] = (),
) -> TruthTable:
    """The truth table from the changed tests, the sweep (head outcomes, bites) and the base run's outcomes;
    `new_names` (new_names.added_names) decide which base failures are only a new name missing."""
    heads = head_outcomes(report)
    bases = {t.id: t for t in base_run}
    collection = {t.id: t for t in base_run if t.collection or "::" not in t.id}
    by_function = {c.id: c for c in changed}
    bites = bites_of(report)
    rows: list[TestRow] = []
    seen: set[str] = set()
    ids = list(dict.fromkeys([*heads, *bases]))
    for c in changed:
        cases = [i for i in ids if function_id(i) == c.id] or [c.id]
        for node in cases:
            seen.add(node)
            rows.append(_row(node, c.file, c.line, c.change, heads, bases, collection, bites, new_names))
    regressions: list[TestRow] = []
    already: list[str] = []
    for node in ids:
        if node in seen or function_id(node) in by_function or node not in heads or node not in bases:
            continue
        h, b = heads[node], bases[node]
        if h.outcome in ("failed", "error"):
            if b.outcome == "passed":
                regressions.append(_row(node, node.split("::", 1)[0], 0, "unchanged", heads, bases, collection, bites,
                                        new_names))
            elif b.outcome in ("failed", "error"):
                already.append(node)
    return TruthTable(head=head, base=base, status="complete", tests=tuple(rows), regressions=tuple(regressions),
                      already_red=tuple(already), base_seconds=base_seconds)


def _row(node: str, file: str, line: int, change: Change, heads: dict[str, TestOutcome],
         bases: dict[str, TestOutcome], collection: dict[str, TestOutcome], bites: dict[str, list[Bite]],
         new_names: Collection[str]) -> TestRow:
    file_of = node.split("::", 1)[0]
    h, h_msg = classify(heads.get(node), collection=None, new_names=new_names)
    b, b_msg = classify(bases.get(node), collection.get(file_of), new_names)
    return TestRow(node, file, line, change, h, b, b_msg, h_msg, tuple(bites.get(node, ())))


def unavailable(head: str, base: str, reason: str) -> TruthTable:
    """A table that could not be made, saying why in one line."""
    return TruthTable(head=head, base=base, status="unavailable", reason=reason)
