"""The evidence ledger, built by hand: what it says about a hunk and a file, the matrix, the verdict evidence.

No Textual here except the last group, which checks the badge vocabulary
drawn from a hand-built ledger (evidence_view is presentation only).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.bite.report import Baseline, BiteReport, HunkResult
from reviewui.core.hunks import DiffLine, Hunk
from reviewui.core.evidence import EvidenceLedger, VerdictEvidence
from reviewui.core.findings.model import finding
from reviewui.core.notes.records import BiteRecord, CommentRecord, FindingRecord, ProbeRecord
from reviewui.core.state import ReviewState
from reviewui.core.transcript.linking import HunkLinks


def hunk(file: str, index: int, new_start: int, new_len: int, body: str = "+x") -> Hunk:
    header = f"@@ -{new_start},0 +{new_start},{new_len} @@"
    lines = tuple(DiffLine("added", b[1:], None, new_start + i) for i, b in enumerate(body.splitlines()))
    return Hunk(file, index, header, "", new_start, 0, new_start, new_len, lines, header + "\n" + body + "\n")


def result(h: Hunk, verdict: str, failing: tuple[str, ...] = ()) -> HunkResult:
    return HunkResult(h.file, h.index, h.header, h.text, verdict, failing_tests=failing)  # type: ignore[arg-type]


@pytest.fixture
def state(tmp_path: Path) -> ReviewState:
    return ReviewState(tmp_path / "state.json", "agent/work")


H0 = hunk("calc.py", 0, 10, 5)          # lines 10..14
H1 = hunk("calc.py", 1, 30, 2, "+a\n+b")  # lines 30..31
HT = hunk("test_calc.py", 0, 1, 3)


def test_a_hunk_with_nothing_known(state: ReviewState) -> None:
    ev = EvidenceLedger(state).hunk(H0)
    assert ev.bite is None and not ev.reviewed and ev.findings == () and ev.comments == ()
    assert ev.turns is None  # no transcript linked: not "not in transcript"
    assert ev.worst_severity is None


def test_findings_land_on_the_hunk_that_holds_their_line(state: ReviewState) -> None:
    ledger = EvidenceLedger(state)
    inside = finding("uncalled-function", "f is never called", file="calc.py", line=14)
    edge = finding("uncalled-function", "g is never called", file="calc.py", line=15)  # one past the hunk
    other_file = finding("uncalled-function", "h", file="other.py", line=12)
    branch_wide = finding("baseline-red", "red")
    no_line = finding("uncalled-function", "k", file="calc.py", line=None)
    ledger.set_findings([inside, edge, other_file, branch_wide, no_line])
    assert ledger.hunk(H0).findings == (inside,)
    assert ledger.hunk(H1).findings == ()
    assert ledger.hunk(H0).worst_severity == "warning"
    ledger.set_findings([inside, finding("baseline-red", "red", file="calc.py", line=10)])
    assert ledger.hunk(H0).worst_severity == "error"


def test_a_pure_deletion_holds_the_line_it_sits_on(state: ReviewState) -> None:
    gone = hunk("calc.py", 2, 40, 0, "")
    assert gone.contains(40) and not gone.contains(41) and not gone.contains(39)
    assert not gone.contains(None) and not hunk("x", 0, 0, 0, "").contains(0)


def test_marks_comments_bites_and_turns(state: ReviewState) -> None:
    ledger = EvidenceLedger(state)
    state.mark(H0.file, H0.header, H0.text)
    state.add_comment(H0.file, H0.header, "why?")
    state.add_comment(H1.file, H1.header, "and this?")
    ledger.add_bite(result(H0, "toothless"))
    ledger.set_links(HunkLinks(by_hunk={("calc.py", 0): (3, 7)}))
    ev = ledger.hunk(H0)
    assert ev.reviewed and ev.bite is not None and ev.bite.verdict == "toothless"
    assert [c.text for c in ev.comments] == ["why?"]
    assert ev.turns == (3, 7)
    assert ledger.hunk(H1).turns == ()  # linked, but no turn wrote it
    # a changed body is no longer reviewed
    changed = hunk("calc.py", 0, 10, 5, "+y")
    assert not ledger.hunk(changed).reviewed


def test_file_evidence_counts_in_verdict_order(state: ReviewState) -> None:
    ledger = EvidenceLedger(state)
    ledger.add_bite(result(H1, "toothless"))
    ledger.add_bite(result(H0, "bites", ("t::a",)))
    state.mark(H1.file, H1.header, H1.text)
    ev = ledger.file("calc.py", [H0, H1])
    assert ev.bite_counts == (("bites", 1), ("toothless", 1))
    assert ev.reviewed == 1 and ev.hunks == 2
    unparsed = ledger.file("calc.py", None)
    assert unparsed.reviewed is None and unparsed.hunks == 0
    assert ledger.file("test_calc.py", [HT]).bite_counts == ()


def test_a_report_sets_the_baseline_and_the_matrix(state: ReviewState) -> None:
    ledger = EvidenceLedger(state)
    report = BiteReport(
        Baseline("green", tests=("t::a", "t::b")),
        (result(H1, "toothless"), result(H0, "bites", ("t::a",))),
        ("test_calc.py",), "pytest",
    )
    ledger.add_report(report)
    ledger.add_report(BiteReport(Baseline("green", tests=("t::b", "t::c")), (), (), "pytest"))
    assert ledger.baseline_tests == ["t::a", "t::b", "t::c"]
    m = ledger.matrix()
    assert m.hunks == (("calc.py:0", "calc.py:0 bites"), ("calc.py:1", "calc.py:1 toothless"))
    assert m.bit == {("calc.py:0", "t::a")}
    assert m.tests == ("t::a", "t::b", "t::c")


def test_a_toothless_hunks_failing_tests_are_not_bites_in_the_matrix(state: ReviewState) -> None:
    ledger = EvidenceLedger(state)
    ledger.add_bite(result(H0, "broken", ("t::a",)))
    assert ledger.matrix().bit == frozenset()


def test_verdict_evidence_from_a_hand_built_ledger(state: ReviewState) -> None:
    ledger = EvidenceLedger(state)
    assert ledger.verdict_evidence() == VerdictEvidence()
    ledger.add_bite(result(H1, "toothless"))
    ledger.add_bite(result(H0, "bites", ("t::a",)))
    state.keep_probe("p1", "def test_p(): pass", {"branch": "pass", "base": "fail"})
    state.add_comment(H0.file, H0.header, "why?", 12)
    ledger.set_findings([finding("uncalled-function", "f is never called", file="calc.py", line=11)])
    ev = ledger.verdict_evidence()
    assert ev.bites == (
        BiteRecord("calc.py", H0.header, "bites", ("t::a",)),
        BiteRecord("calc.py", H1.header, "toothless", ()),
    )
    assert ev.probes == (ProbeRecord("p1", "def test_p(): pass", "pass", "fail"),)
    assert ev.comments == (CommentRecord("calc.py", H0.header, 12, "why?"),)
    assert ev.findings == (FindingRecord("uncalled-function", "f is never called"),)


def test_badges_and_summary_from_a_hand_built_ledger(state: ReviewState) -> None:
    from reviewui.ui.evidence_view import bite_style, file_summary, hunk_badges

    ledger = EvidenceLedger(state)
    ledger.add_bite(result(H0, "toothless"))
    state.mark(H0.file, H0.header, H0.text)
    ledger.set_findings([finding("baseline-red", "red", file="calc.py", line=10),
                         finding("uncalled-function", "f", file="calc.py", line=11)])
    ledger.set_links(HunkLinks(by_hunk={("calc.py", 0): (1, 2, 3, 4)}))
    state.add_comment(H0.file, H0.header, "one")
    badges = [(b.text, b.tone) for b in hunk_badges(ledger.hunk(H0))]
    assert badges == [("toothless", "bad"), ("✓ reviewed", "good"), ("2 findings", "bad"),
                      ("turn 1,2,3…", "info"), ("💬 one", "info")]  # issue 16: the comment's text, not a count
    assert [(b.text, b.tone) for b in hunk_badges(ledger.hunk(H1))] == [("not in transcript", "warn")]
    summary = file_summary(ledger.file("calc.py", [H0, H1]))
    assert summary is not None and summary.plain == "1 toothless ⚑2 ✓1/2"
    assert file_summary(ledger.file("nothing.py", None)) is None
    assert bite_style("bites") == "$success" and bite_style("toothless") == "$error"
    assert bite_style("skipped") == "$text-muted"


def _review(verdict: str, reviewer: str = "Test Reviewer <t@example.com>"):
    from datetime import datetime, timezone

    from reviewui.core.notes.model import Review

    return Review("id-" + verdict, verdict, "why", reviewer, datetime.now(timezone.utc), "reviewui", "agent/work",
                  "b" * 40, "h" * 40, "t" * 40, "p" * 40)


def test_what_stands_against_a_reject(state: ReviewState) -> None:
    ledger = EvidenceLedger(state)
    assert ledger.against("reject") == []  # nothing known: nothing stands against it
    ledger.add_bite(result(H0, "bites", ("t::a",)))
    ledger.add_bite(result(H1, "bites", ("t::b",)))
    ledger.add_bite(result(HT, "not-code"))  # a test file's hunk is not a checked source hunk
    state.keep_probe("test_ok", "def test_ok():\n    assert 1\n", {"branch": "passed", "base": "failed"})
    state.keep_probe("test_bad", "def test_bad():\n    assert 0\n", {"branch": "failed", "base": "failed"})
    history = [(_review("approve"), "same-patch", "unsigned"), (_review("approve"), "different-patch", ""),
               (_review("reject"), "this-head", "")]
    assert ledger.against("reject", history) == [
        "an earlier approve by Test Reviewer (same patch)",
        "the evidence so far supports the branch: 2 of 2 hunks bite, no error finding",
        "kept probe test_ok passes on branch, fails on base",
    ]
    # one toothless hunk, or an error finding: the bites no longer speak for the branch
    ledger.add_bite(result(H1, "toothless"))
    assert not any("supports" in line for line in ledger.against("reject"))
    ledger.add_bite(result(H1, "bites", ("t::b",)))
    ledger.set_findings([finding("baseline-red", "red")])
    assert not any("supports" in line for line in ledger.against("reject"))
    ledger.set_findings([])
    assert "the evidence so far supports the branch: 2 of 2 hunks bite, no error finding" in ledger.against("reject")
    # none of it stands against an approve; the failing probe and the reject do
    assert ledger.against("approve", history) == ["kept probe test_bad fails on both",
                                                  "an earlier reject by Test Reviewer (this head)"]


def test_what_stands_against_an_approve(state: ReviewState) -> None:
    from reviewui.core.bite.guard_report import GuardResult

    ledger = EvidenceLedger(state)
    guard = GuardResult("calc.py", 0, 11, "boundary", "< to <=", "toothless")
    ledger.add_bite(HunkResult(H0.file, H0.index, H0.header, H0.text, "bites", failing_tests=("t::a",), guards=(guard,)))
    ledger.add_bite(result(H1, "uncovered"))
    ledger.set_findings([finding("baseline-red", "red"), finding("uncalled-function", "f", file="calc.py", line=10)])
    assert ledger.against("approve", [(_review("reject"), "this-head", "")]) == [
        "calc.py:11 boundary guard is toothless: no test notices it reverted",
        f"calc.py {H1.header} is uncovered: no test notices it reverted",
        "error finding baseline-red: red",
        "an earlier reject by Test Reviewer (this head)",
    ]
