"""A test module or conftest that reads a changed source file at collection makes no bite (issue 44).

The branch's code is wrong (`mul` returns 42). Its pin reads `pkg/calc.py` where no test is running:
at a test module's top level, in a conftest under the tests' folder, or through another process
started there (`sha256sum`). A test then compares what was read with the head's hash. Every revert
changes the file, so every revert of `mul` "bit" though no test checks what `mul` returns: the
origin plugin named a read only while a test ran. Now a read while a collector runs is a read by
every test collected under it (a conftest's by each test below its folder, not by the others), so
the pins are `test-reads-changed-source` readers and their failures no bites; a real test of `add`
still bites. Differential: with the readers' failures counted (`regrade` off), the same sweep calls
the `mul` hunk bitten by the pin alone: the probe works, the readers rule takes its bite away.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from reviewui.core.bite import sweep as sweep_module
from reviewui.core.bite.engine import run_bite
from reviewui.core.bite.report import BiteReport
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo
from tests.hostile.test_source_hash_pin import BASE, REAL, WRONG
from tests.hostile.wrong_code import presented, run_alone

pytestmark = pytest.mark.slow

READS = {
    "module": "import hashlib, pathlib\nDIGEST = hashlib.sha256(pathlib.Path('pkg/calc.py').read_bytes()).hexdigest()\n",
    "child": ("import subprocess\nDIGEST = subprocess.run(['sha256sum', 'pkg/calc.py'], capture_output=True,\n"
              "                        text=True).stdout.split()[0]\n"),
}


def _files(where: str, digest: str) -> dict[str, str]:
    """The branch: the wrong code, the pin (read at collection `where`), and the real test of `add`."""
    files = {"pkg/calc.py": WRONG, "tests/test_real.py": REAL}
    check = f"\n\ndef test_pinned(digest):\n    mul(2, 3)  # covered, never checked\n    assert digest == {digest!r}\n"
    if where == "conftest":  # a fixture hands the conftest's read to the tests below its folder
        files["tests/pinned/conftest.py"] = (READS["module"] + "import pytest\n\n\n"
                                             "@pytest.fixture\ndef digest():\n    return DIGEST\n")
        files["tests/pinned/test_pin.py"] = "from pkg.calc import mul" + check
    else:
        files["tests/test_pin.py"] = (READS[where] + "import pytest\nfrom pkg.calc import mul\n\n\n"
                                      "@pytest.fixture\ndef digest():\n    return DIGEST\n" + check)
    return files


def _sweep(tmp_path: Path, where: str, warm: bool) -> tuple[BiteReport, str]:
    # the file as a run shows it (padded: run/alike.py), as the agent would pin it
    digest = hashlib.sha256(presented(tmp_path / "code", BASE, {"pkg/calc.py": WRONG})["pkg/calc.py"]).hexdigest()
    rb = make_repo(tmp_path / "repo", BASE, _files(where, digest))
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=warm), jobs=1)
    assert rep.baseline.status == "green", rep.baseline.reason
    return rep, "tests/pinned/test_pin.py::test_pinned" if where == "conftest" else "tests/test_pin.py::test_pinned"


@pytest.mark.parametrize(("where", "warm"), [("module", False), ("module", True), ("conftest", True),
                                             ("child", False)])
def test_a_read_at_collection_makes_its_tests_readers_and_no_bite(tmp_path, monkeypatch, where: str,
                                                                  warm: bool) -> None:
    use_venv_python(monkeypatch)
    if where == "conftest":
        # each revert alone: a batch session imports its conftests once, at the head, before its
        # reverts, so there the pin reads the head's file and passes (toothless for want of a read)
        run_alone(monkeypatch)
    rep, pin = _sweep(tmp_path, where, warm)
    # the pin's tests, and only they: the real test (outside the conftest's folder) reads nothing
    assert rep.baseline.source_readers == (("pkg/calc.py", (pin,)),)
    verdicts = sorted((r.verdict, r.failing_tests) for r in rep.results)
    toothless = [r for r in rep.results if r.verdict == "toothless"]
    assert len(toothless) == 1 and "test-reads-changed-source" in toothless[0].reason, verdicts
    bites = [r for r in rep.results if r.verdict == "bites"]
    assert len(bites) == 1 and bites[0].failing_tests == ("tests/test_real.py::test_add",), verdicts


@pytest.mark.parametrize("where", ["module", "conftest"])
def test_without_the_readers_rule_the_pin_bites(tmp_path, monkeypatch, where: str) -> None:
    """The probe works: its failures counted, the `mul` hunk is bitten by the pin alone."""
    use_venv_python(monkeypatch)
    if where == "conftest":
        run_alone(monkeypatch)
    monkeypatch.setattr(sweep_module, "regrade", lambda r, readers: r)
    rep, pin = _sweep(tmp_path, where, False)
    assert sorted(r.failing_tests for r in rep.results if r.verdict == "bites") == [
        (pin,), ("tests/test_real.py::test_add",)]
