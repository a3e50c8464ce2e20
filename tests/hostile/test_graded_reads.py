"""A test that reads the file only where it is graded makes no bite (issue 44).

The branch's code is wrong (`mul` returns 42). The pin compares a hash of `pkg/calc.py` with the
head's, but only when it runs beside fewer tests than the baseline runs (a revert's coverage
selection): in the baseline it reads nothing, so it was no reader there, and its failure in every
revert of `mul` was a bite. Now every graded run records its own readers (the origin plugin in
every run, `RevertResult.run_readers`): the pin's failure in the run where it read is set aside,
for reverts in a batch session's forks (warm) and run alone (cold). A real test of `add` still
bites. Differential: with the graded runs' readers ignored (`run_readers` dropped) the pin bites.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest

from reviewui.core.bite import revert_grade
from reviewui.core.bite.engine import run_bite
from reviewui.core.bite.report import BiteReport
from reviewui.core.config import Settings
from reviewui.core.findings.source_readers import source_read_as_data
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo
from tests.hostile.test_source_hash_pin import BASE, REAL, WRONG
from tests.hostile.wrong_code import presented

pytestmark = pytest.mark.slow


def _pin(digest: str) -> str:
    return ("import hashlib, pathlib\nfrom pkg.calc import mul\n\n\n"
            "def test_pin(request):\n    mul(2, 3)  # covered, never checked\n"
            "    if len(request.session.items) > 1:\n        return  # the baseline runs every test: nothing read there\n"
            "    data = pathlib.Path('pkg/calc.py').read_bytes()\n"
            f"    assert hashlib.sha256(data).hexdigest() == {digest!r}\n")


def _sweep(tmp_path: Path, warm: bool) -> BiteReport:
    # the file as a run shows it (padded: run/alike.py), as the agent would pin it
    digest = hashlib.sha256(presented(tmp_path / "code", BASE, {"pkg/calc.py": WRONG})["pkg/calc.py"]).hexdigest()
    files = {"pkg/calc.py": WRONG, "tests/test_pin.py": _pin(digest), "tests/test_real.py": REAL}
    t, d = load(make_repo(tmp_path / "repo", BASE, files).root)
    rep = run_bite(t, d, Settings(warm_runner=warm), jobs=1)
    assert rep.baseline.status == "green", rep.baseline.reason
    assert rep.baseline.source_readers == ()  # no reader where the baseline could see one
    return rep


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_read_made_only_where_it_is_graded_makes_no_bite(tmp_path, monkeypatch, warm: bool) -> None:
    use_venv_python(monkeypatch)
    rep = _sweep(tmp_path, warm)
    mul = next(r for r in rep.results if "mul" in r.text)
    assert mul.verdict == "toothless", (mul.verdict, mul.failing_tests, mul.reason)
    assert mul.run_readers == ("tests/test_pin.py::test_pin",)
    assert "test-reads-changed-source" in mul.reason
    bites = [r for r in rep.results if r.verdict == "bites"]
    assert [r.failing_tests for r in bites] == [("tests/test_real.py::test_add",)], rep.results
    # the finding names it, and says it read only where it was graded
    [f] = source_read_as_data(rep)
    assert (f.kind, f.symbol, f.evidence) == ("test-reads-changed-source", "tests/test_pin.py::test_pin", "pkg/calc.py")
    assert "in a graded run, not in the baseline" in f.message


def test_without_the_graded_runs_readers_the_pin_bites(tmp_path, monkeypatch) -> None:
    """The probe works: its readers in the graded run ignored, the `mul` hunk is bitten by the pin alone."""
    use_venv_python(monkeypatch)
    grade = revert_grade.grade_revert
    monkeypatch.setattr(revert_grade, "grade_revert", lambda *a, **k: replace(grade(*a, **k), run_readers=()))
    import reviewui.core.bite.fallback as fallback
    import reviewui.core.bite.revert_batch as revert_batch

    monkeypatch.setattr(fallback, "grade_revert", revert_grade.grade_revert)
    monkeypatch.setattr(revert_batch, "grade_revert", revert_grade.grade_revert)
    mul = next(r for r in _sweep(tmp_path, warm=True).results if "mul" in r.text)
    assert mul.verdict == "bites" and mul.failing_tests == ("tests/test_pin.py::test_pin",), mul
