"""A pin on the changed code's objects makes no bite, of a hunk or of a guard (issue 44).

The branch's code is wrong (`mul` returns 42; `clamp` gained a check no test asserts). The pin
asserts nothing about either: it compares a hash of their bytecode, reached through the function
(`mul.__code__`) or a running frame (a profile hook's `frame.f_code`); `dis`, `gc.get_referents`, a
caught traceback's frame and a generator are seen the same way (tests/core/bite/test_git_reads.py).
Every revert and every guard changes that bytecode, so each of them "bit". Now the origin plugin
sees a test reach the code object of a function of a changed source file (Python audits `__code__`
and `f_code`) and takes it for a read of that file, as it takes an open of it; reading a signature
or a file name (`inspect.signature`, logging's caller lookup) stays none. Differential: outside,
the pin passes on the head and fails on a reverted hunk and on a guard; inside, the hunks and the
guard are toothless, and only the real test bites.
"""

from __future__ import annotations


import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo
from tests.hostile.test_source_hash_pin import FILLER, REAL
from tests.hostile.wrong_code import outside as _outside  # the name its assertions have always used
from tests.hostile.wrong_code import pin_digest, presented

pytestmark = pytest.mark.slow

BASE = {"pkg/__init__.py": "",
        "pkg/calc.py": "def mul(a, b):\n    return a * b\n" + FILLER + "\n\ndef clamp(x):\n    return x\n"
                       + FILLER + "\n\ndef add(a, b):\n    return a - b\n"}
WRONG = ("def mul(a, b):\n    return 42\n" + FILLER + "\n\ndef clamp(x):\n    if x > 10:\n        return 10\n"
         "    return x\n" + FILLER + "\n\ndef add(a, b):\n    return a + b\n")
WAYS = {
    "code": "[f.__code__.co_code for f in FUNCS]",
    "profile": "profiled()",
}
PIN = """import hashlib, sys
import pkg.calc
from pkg.calc import clamp, mul

FUNCS = (mul, clamp)


def profiled():
    seen = []
    sys.setprofile(lambda frame, event, arg: seen.append(frame.f_code.co_code) if event == "call" else None)
    try:
        mul(2, 3)
        clamp(11)
    finally:
        sys.setprofile(None)
    return seen


def digest():
    return hashlib.sha256(repr(WAY).encode()).hexdigest()


def test_pin():
    mul(2, 3)  # covered, never checked
    clamp(11)
    assert digest() == DIGEST
"""


def _pin(way: str, digest: str) -> str:
    return PIN.replace("WAY", WAYS[way]).replace("DIGEST", repr(digest))


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_pin_on_the_code_is_a_reader_and_makes_no_bite(tmp_path, monkeypatch, way: str) -> None:
    use_venv_python(monkeypatch)
    head = presented(tmp_path / "code", BASE, {"pkg/calc.py": WRONG})["pkg/calc.py"]  # as every run shows it
    tree = tmp_path / "outside"
    digest = pin_digest(tree, {**BASE, "tests/test_pin.py": _pin(way, "")}, head)
    files = {"pkg/calc.py": WRONG, "tests/test_pin.py": _pin(way, digest), "tests/test_real.py": REAL}
    (tree / "tests" / "test_pin.py").write_text(files["tests/test_pin.py"])
    # outside: the probe works (it passes on the head's code and fails on a revert or a guard)
    assert _outside(tree, head).returncode == 0
    assert _outside(tree, head.replace(b"return 42", b"return a * b")).returncode == 1
    assert _outside(tree, head.replace(b"if x > 10:", b"if False:")).returncode == 1
    # inside: a reader, so no bite of a hunk or a guard of pkg/calc.py but the real test's
    repo = make_repo(tmp_path / "repo", BASE, files).root
    t, d = load(repo)
    rep = run_bite(t, d, Settings(), jobs=1, guards=True)
    assert rep.baseline.status == "green", rep.baseline.reason

    assert rep.baseline.source_readers == (("pkg/calc.py", ("tests/test_pin.py::test_pin",)),)
    for name in ("mul", "clamp"):
        r = next(r for r in rep.results if f"def {name}" in r.text)
        assert r.verdict == "toothless" and "test-reads-changed-source" in r.reason, (name, r.verdict, r.reason)
        assert [g.verdict for g in r.guards if g.verdict == "bites"] == [], (name, r.guards)
    bites = [r for r in rep.results if r.verdict == "bites"]
    assert [r.failing_tests for r in bites] == [("tests/test_real.py::test_add",)], rep.results
