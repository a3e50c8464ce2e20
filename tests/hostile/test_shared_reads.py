"""A read one test makes and another test uses makes no bite (issue 44).

The branch's code is wrong (`mul` returns 42). The pins compare a hash of `pkg/calc.py` with the
head's, but the file is read elsewhere: by a session-scoped fixture (made once, in its first user's
setup: the read was that test's alone, so the other users' failures "bit"), or by one test that
keeps the bytes in its module's global for the next to compare. Every revert of `mul` "bit" while no
test checks what it returns. Now a fixture's read is read by every test that uses it, and a reader's
failures and those of every test of its module are no bites; a real test of `add` in another module
still bites. Differential: with the readers' failures counted (`regrade` off) the pins bite.
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
from tests.hostile.wrong_code import presented

pytestmark = pytest.mark.slow

FIXTURE = ("import hashlib, pathlib\nimport pytest\n\n\n@pytest.fixture(scope='session')\ndef digest():\n"
           "    return hashlib.sha256(pathlib.Path('pkg/calc.py').read_bytes()).hexdigest()\n")
GLOBAL = ("import hashlib, pathlib\nfrom pkg.calc import mul\nSEEN = []\n\n\n"
          "def test_a_reads():\n    mul(2, 3)\n    SEEN.append(pathlib.Path('pkg/calc.py').read_bytes())\n\n\n"
          "def test_b_compares():\n    mul(2, 3)  # covered, never checked\n"
          "    assert hashlib.sha256(SEEN[0]).hexdigest() == %r\n")


def _files(how: str, digest: str) -> dict[str, str]:
    files = {"pkg/calc.py": WRONG, "tests/test_real.py": REAL}
    if how == "fixture":  # three users of the conftest's fixture: the first one's setup reads
        files["tests/conftest.py"] = FIXTURE
        files["tests/test_pin.py"] = "from pkg.calc import mul\n" + "".join(
            f"\n\ndef test_pin{n}(digest):\n    mul(2, 3)  # covered, never checked\n    assert digest == {digest!r}\n"
            for n in range(3))
    else:
        files["tests/test_pin.py"] = GLOBAL % digest
    return files


def _sweep(tmp_path: Path, how: str, warm: bool = True) -> BiteReport:
    # the file as a run shows it (padded: run/alike.py), as the agent would pin it
    digest = hashlib.sha256(presented(tmp_path / "code", BASE, {"pkg/calc.py": WRONG})["pkg/calc.py"]).hexdigest()
    t, d = load(make_repo(tmp_path / "repo", BASE, _files(how, digest)).root)
    rep = run_bite(t, d, Settings(warm_runner=warm), jobs=1)
    assert rep.baseline.status == "green", rep.baseline.reason
    return rep


@pytest.mark.parametrize(("how", "warm"), [("fixture", True), ("fixture", False), ("global", True)])
def test_a_read_shared_between_tests_makes_no_bite(tmp_path, monkeypatch, how: str, warm: bool) -> None:
    use_venv_python(monkeypatch)
    rep = _sweep(tmp_path, how, warm)
    readers = dict(rep.baseline.source_readers)["pkg/calc.py"]
    if how == "fixture":  # every user of the fixture, not only the one whose setup made it
        assert readers == tuple(f"tests/test_pin.py::test_pin{n}" for n in range(3))
    else:  # the finding names the reader only; its module's other test is set aside with it
        assert readers == ("tests/test_pin.py::test_a_reads",)
    verdicts = sorted((r.verdict, r.failing_tests) for r in rep.results)
    toothless = [r for r in rep.results if r.verdict == "toothless"]
    assert len(toothless) == 1 and "test-reads-changed-source" in toothless[0].reason, verdicts
    bites = [r for r in rep.results if r.verdict == "bites"]
    assert len(bites) == 1 and bites[0].failing_tests == ("tests/test_real.py::test_add",), verdicts


@pytest.mark.parametrize("how", ["fixture", "global"])
def test_without_the_readers_rule_the_pins_bite(tmp_path, monkeypatch, how: str) -> None:
    """The probe works: its failures counted, the `mul` hunk is bitten by the pins alone."""
    use_venv_python(monkeypatch)
    monkeypatch.setattr(sweep_module, "regrade", lambda r, readers: r)
    rep = _sweep(tmp_path, how)
    pins = {r.failing_tests for r in rep.results if r.verdict == "bites"} - {("tests/test_real.py::test_add",)}
    assert pins and all(t.startswith("tests/test_pin.py::") for p in pins for t in p), pins
