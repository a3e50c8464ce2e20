"""A test that pins a hash of a changed source file makes no bite of its hunks (issue 37).

The branch's code is wrong (`mul` returns 42) and its test asserts nothing about it: it only pins
the SHA-256 of `pkg/calc.py`. Every revert changes the file, so before, every hunk "bit". Now the
baseline sees the test read the file as data (an open that is no import), the finding
`test-reads-changed-source` names it, and its failures are no bites: the hunks are toothless.
Differential: the same pin in a test that also imports the module, and a test that imports it
only, are told apart (the importer alone is no reader), and a real test still bites.
"""

from __future__ import annotations

import hashlib

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from reviewui.core.findings.source_readers import source_read_as_data
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo
from tests.hostile.wrong_code import presented

pytestmark = pytest.mark.slow

FILLER = "".join(f"\n\ndef f{n}():\n    return {n}\n" for n in range(4))  # the two changes are two hunks
WRONG = "def mul(a, b):\n    return 42\n" + FILLER + "\n\ndef add(a, b):\n    return a + b\n"
BASE = {"pkg/__init__.py": "",
        "pkg/calc.py": "def mul(a, b):\n    return a * b\n" + FILLER + "\n\ndef add(a, b):\n    return a - b\n"}


def _pin(digest: str) -> str:
    return ("import hashlib, pathlib\nfrom pkg.calc import mul\n\n\ndef test_pinned():\n    mul(2, 3)\n"
            "    data = pathlib.Path('pkg/calc.py').read_bytes()\n"
            f"    assert hashlib.sha256(data).hexdigest() == {digest!r}\n")


REAL = ("import importlib\nimport pkg.calc\n\n\ndef test_add():\n"
        "    importlib.reload(pkg.calc)  # imported while the test runs: no read as data\n"
        "    assert pkg.calc.add(2, 3) == 5\n")


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_hash_pin_is_found_and_makes_no_bite(tmp_path, monkeypatch, warm: bool) -> None:
    use_venv_python(monkeypatch)
    # the file as a run shows it (padded: run/alike.py), as the agent would pin it
    digest = hashlib.sha256(presented(tmp_path / "code", BASE, {"pkg/calc.py": WRONG})["pkg/calc.py"]).hexdigest()
    rb = make_repo(tmp_path / "repo", BASE, {"pkg/calc.py": WRONG, "tests/test_pin.py": _pin(digest),
                                             "tests/test_real.py": REAL})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=warm), jobs=1)
    assert rep.baseline.status == "green", rep.baseline.reason
    # the importer of pkg.calc that reads nothing is no reader; the pin is
    assert rep.baseline.source_readers == (("pkg/calc.py", ("tests/test_pin.py::test_pinned",)),)
    by_header = {r.header.split(" @@")[0]: r for r in rep.results}
    verdicts = sorted((r.verdict, tuple(r.failing_tests)) for r in rep.results)
    # the `mul` hunk: only the pin fails on revert -> toothless, with the reason
    toothless = [r for r in rep.results if r.verdict == "toothless"]
    assert toothless and all("test-reads-changed-source" in r.reason for r in toothless), verdicts
    # the `add` hunk: the real test bites, and the pin is not counted among its failing tests
    bites = [r for r in rep.results if r.verdict == "bites"]
    assert bites and all(r.failing_tests == ("tests/test_real.py::test_add",) for r in bites), (verdicts, by_header)
    [f] = source_read_as_data(rep)
    assert (f.kind, f.severity, f.file, f.symbol, f.evidence) == (
        "test-reads-changed-source", "warning", "tests/test_pin.py", "tests/test_pin.py::test_pinned", "pkg/calc.py")
