"""What a reader read, handed to a test that never opens the file, makes no bite (issue 44).

The branch's code is wrong (`mul` returns 42). A first test reads `pkg/calc.py` and keeps its hash
in a module global (it is a reader: its own failures are set aside; it calls `mul`, so coverage
selects it with the pin); a second test, which never
opens the file, compares that global with the head's hash. It failed in every revert of the file,
so the `mul` hunk "bit" with no test checking what `mul` returns. Now a bite won only by
non-readers beside a reader is run again with the readers deselected, and once as a control: the
pin either passes without its reader (lenient: `.get` with the head's hash) or fails at the head
too (strict: KeyError), and either way bites nothing. A real test of `add` still bites.
Differential: without the rerun (`recheck_readers` off) the pin bites the `mul` hunk. (A guard's
edit is swapped in in memory, leaving the file's bytes alone: a pin has nothing to see there; the
guard path of the rerun is tested in tests/core/bite/test_reader_rerun.py.) The revert-shaped
controls write the file marked on every line (core/bite/inert_edit.py): the handed hash then
differs there too, and the sweep is refused before any rerun; the rerun is tried alone here, with
the marked controls off, and the refusal last.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from reviewui.core.bite import inert_edit
from reviewui.core.bite import sweep as sweep_module
from reviewui.core.bite.engine import UntrustedCommand, run_bite
from reviewui.core.bite.report import BiteReport
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo
from tests.hostile.test_source_hash_pin import BASE, REAL, WRONG
from tests.hostile.wrong_code import presented

pytestmark = pytest.mark.slow



def _pins(digest: str, strict: bool) -> str:
    seen = "SEEN['h']" if strict else f"SEEN.get('h', {digest!r})"
    return ("import hashlib, pathlib\nfrom pkg.calc import mul\n\nSEEN = {}\n\n\n"
            "def test_a_reader():\n    mul(2, 3)  # covers `mul`, so coverage selects it with the pin\n"
            "    SEEN['h'] = hashlib.sha256(pathlib.Path('pkg/calc.py').read_bytes()).hexdigest()\n\n\n"
            f"def test_pin():\n    mul(2, 3)  # covered, never checked\n    assert {seen} == {digest!r}\n")


def _sweep(tmp_path: Path, strict: bool, monkeypatch: pytest.MonkeyPatch | None = None) -> BiteReport:
    """The sweep of the pins; with `monkeypatch`, the marked controls off (the rerun alone)."""
    if monkeypatch is not None:
        monkeypatch.setattr(inert_edit, "MARKED", False)
    # the file as a run shows it (padded: run/alike.py), as the agent would pin it
    digest = hashlib.sha256(presented(tmp_path / "code", BASE, {"pkg/calc.py": WRONG})["pkg/calc.py"]).hexdigest()
    files = {"pkg/calc.py": WRONG, "tests/test_pin.py": _pins(digest, strict), "tests/test_real.py": REAL}
    t, d = load(make_repo(tmp_path / "repo", BASE, files).root)
    rep = run_bite(t, d, Settings(), jobs=1)
    assert rep.baseline.status == "green", rep.baseline.reason
    assert rep.baseline.source_readers == (("pkg/calc.py", ("tests/test_pin.py::test_a_reader",)),)
    return rep


def _mul(rep: BiteReport):  # type: ignore[no-untyped-def]
    return next(r for r in rep.results if "mul" in r.text)


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
def test_a_read_handed_to_another_test_makes_no_bite(tmp_path, monkeypatch, strict: bool) -> None:
    use_venv_python(monkeypatch)
    rep = _sweep(tmp_path, strict, monkeypatch)
    mul = _mul(rep)
    assert mul.verdict == "toothless", (mul.verdict, mul.failing_tests, mul.reason)
    assert "tests/test_pin.py::test_a_reader" in mul.reason and "test-reads-changed-source" in mul.reason
    assert ("failed with nothing changed too" in mul.reason) is strict, mul.reason
    bites = [r for r in rep.results if r.verdict == "bites"]
    assert [r.failing_tests for r in bites] == [("tests/test_real.py::test_add",)], rep.results


def test_without_the_rerun_the_handed_read_bites(tmp_path, monkeypatch) -> None:
    """The probe works: without the rerun the pin alone bites the `mul` hunk."""
    use_venv_python(monkeypatch)
    monkeypatch.setattr(sweep_module.Sweep, "recheck_readers", lambda self, held, run, control: held)
    mul = _mul(_sweep(tmp_path, strict=False, monkeypatch=monkeypatch))
    assert mul.verdict == "bites" and mul.failing_tests == ("tests/test_pin.py::test_pin",), mul


def test_with_the_marked_controls_the_handed_read_is_refused(tmp_path, monkeypatch) -> None:
    """Every layer on: the pin fails in a control that wrote the file marked, and names itself."""
    use_venv_python(monkeypatch)
    with pytest.raises(UntrustedCommand) as refused:
        _sweep(tmp_path, strict=False)
    assert tuple(refused.value.tests) == ("tests/test_pin.py::test_pin",), str(refused.value)
