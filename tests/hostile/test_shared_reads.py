"""A read a fixture makes for its users makes no bite (issue 44).

The branch's code is wrong (`mul` returns 42). The pins compare a hash of `pkg/calc.py` with the
head's, but the file is read by a session-scoped fixture: made once, in its first user's setup, so
the read was that test's alone and the other users' failures "bit" every revert of `mul` while no
test checks what it returns. Now what a fixture's setup reads is read by every test that uses it;
a real test of `add` in another module still bites. Differential: with the readers' failures
counted (`regrade` off) the pins bite. One test keeping what it read in a module global for another
to compare is closed by a rerun without the readers (tests/hostile/test_handed_reads.py; setting a
reader's module-mates aside with it made real tests beside a reader lose their bites:
tests/hostile/test_child_source_reads.py).
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


def _files(digest: str) -> dict[str, str]:
    """Three users of the conftest's fixture (the first one's setup reads), and the real test."""
    return {"pkg/calc.py": WRONG, "tests/test_real.py": REAL, "tests/conftest.py": FIXTURE,
            "tests/test_pin.py": "from pkg.calc import mul\n" + "".join(
                f"\n\ndef test_pin{n}(digest):\n    mul(2, 3)  # covered, never checked\n    assert digest == {digest!r}\n"
                for n in range(3))}


def _sweep(tmp_path: Path, warm: bool = True) -> BiteReport:
    # the file as a run shows it (padded: run/alike.py), as the agent would pin it
    digest = hashlib.sha256(presented(tmp_path / "code", BASE, {"pkg/calc.py": WRONG})["pkg/calc.py"]).hexdigest()
    t, d = load(make_repo(tmp_path / "repo", BASE, _files(digest)).root)
    rep = run_bite(t, d, Settings(warm_runner=warm), jobs=1)
    assert rep.baseline.status == "green", rep.baseline.reason
    return rep


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_fixtures_read_is_its_users_and_makes_no_bite(tmp_path, monkeypatch, warm: bool) -> None:
    use_venv_python(monkeypatch)
    rep = _sweep(tmp_path, warm)
    # every user of the fixture, not only the one whose setup made it
    assert rep.baseline.source_readers == (("pkg/calc.py", tuple(f"tests/test_pin.py::test_pin{n}" for n in range(3))),)
    verdicts = sorted((r.verdict, r.failing_tests) for r in rep.results)
    toothless = [r for r in rep.results if r.verdict == "toothless"]
    assert len(toothless) == 1 and "test-reads-changed-source" in toothless[0].reason, verdicts
    bites = [r for r in rep.results if r.verdict == "bites"]
    assert len(bites) == 1 and bites[0].failing_tests == ("tests/test_real.py::test_add",), verdicts


def test_without_the_readers_rule_the_pins_bite(tmp_path, monkeypatch) -> None:
    """The probe works: its failures counted, the `mul` hunk is bitten by the pins alone."""
    use_venv_python(monkeypatch)
    monkeypatch.setattr(sweep_module, "regrade", lambda r, readers: r)
    rep = _sweep(tmp_path)
    pins = {r.failing_tests for r in rep.results if r.verdict == "bites"} - {("tests/test_real.py::test_add",)}
    assert pins and all(t.startswith("tests/test_pin.py::") for p in pins for t in p), pins
