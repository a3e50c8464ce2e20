"""The session as the one façade: --hunk parsed once, verdicts built from the ledger, history."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.bite.report import HunkResult
from reviewui.core.errors import ReviewError
from reviewui.core.findings.model import finding
from reviewui.core.notes.verdicts import reviews_on
from reviewui.core.session import ReviewSession
from tests.awkward import awkward_repo


@pytest.fixture
def session(tmp_path: Path) -> ReviewSession:
    awkward_repo(tmp_path / "repo")
    return ReviewSession.open(tmp_path / "repo", "agent/work")


def test_hunks_for_a_bite(session: ReviewSession) -> None:
    calc = session.diff.file("pkg/calc.py")
    assert calc is not None
    assert session.hunks("pkg/calc.py") == [("pkg/calc.py", h.index) for h in calc.hunks]
    assert session.hunks("pkg/calc.py:1") == [("pkg/calc.py", 0)]
    with pytest.raises(ReviewError, match="has no hunk 7"):
        session.hunks("pkg/calc.py:7")
    with pytest.raises(ReviewError, match="not changed"):
        session.hunks("nope.py")


def test_one_hunk_for_a_probe(session: ReviewSession) -> None:
    assert session.one_hunk("pkg/calc.py:1") == ("pkg/calc.py", 0)
    for bad, says in [("pkg/calc.py", "takes FILE:N"), ("pkg/calc.py:x", "takes FILE:N"),
                      ("pkg/calc.py:9", "has no hunk 9"), ("nope.py:0", "not changed")]:
        with pytest.raises(ReviewError, match=says):
            session.one_hunk(bad)


def test_a_verdict_records_what_the_ledger_holds(session: ReviewSession) -> None:
    calc = session.diff.file("pkg/calc.py")
    assert calc is not None
    h = calc.hunks[0]
    ledger = session.evidence
    ledger.add_bite(HunkResult(h.file, h.index, h.header, h.text, "toothless"))
    ledger.set_findings([finding("uncalled-function", "f is never called", file=h.file, line=h.new_start)])
    ledger.state.add_comment(h.file, h.header, "why None?")
    assert session.history() == []
    review = session.verdict("reject", "no test bites")
    stored = reviews_on(session.target.repo_dir, session.target.head, session.settings.notes_ref)
    assert [r.id for r in stored] == [review.id]
    assert [(b.file, b.verdict) for b in stored[0].bites] == [("pkg/calc.py", "toothless")]
    assert [f.kind for f in stored[0].findings] == ["uncalled-function"]
    assert [c.text for c in stored[0].comments] == ["why None?"]
    assert [(r.id, rel) for r, rel, _signed in session.history()] == [(review.id, "this-head")]


def test_a_reject_without_reason_records_nothing(session: ReviewSession) -> None:
    with pytest.raises(ReviewError, match="reason"):
        session.verdict("reject", "  ")
    assert session.history() == []
