"""A pin on the changed file's text, read through the standard library, makes no bite (issue 44).

The branch's code is wrong (`mul` returns 42). The pin asserts nothing about it: it compares a
hash of `pkg/calc.py`'s text, read through `inspect.getsource`, the module loader's `get_source`
or `linecache`. Those opens came from the standard library's source-lookup code, which the origin
plugin took for a traceback being shown, so the pin was no reader and bit every revert of the
file. Now a lookup a test makes reads the file as data (a traceback shown, an import, stay none:
tests/core/bite/test_git_reads.py). Differential: outside, the pin passes at the head and fails on
the reverted file (it would bite); inside, its failures are set aside and the hunk is toothless.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo
from tests.hostile.test_source_hash_pin import BASE, REAL, WRONG
from tests.hostile.wrong_code import presented

pytestmark = pytest.mark.slow

WAYS = {
    "getsource": "inspect.getsource(pkg.calc)",
    "loader": "pkg.calc.__loader__.get_source('pkg.calc')",
    "linecache": "''.join(linecache.getlines(pkg.calc.__file__))",
}


def _pin(way: str, digest: str) -> str:
    return ("import hashlib, inspect, linecache\nimport pkg.calc\nfrom pkg.calc import mul\n\n\n"
            f"def test_pin():\n    mul(2, 3)  # covered, never checked\n    text = {WAYS[way]}\n"
            f"    assert hashlib.sha256(text.encode()).hexdigest() == {digest!r}\n")


def _outside(tree: Path, calc: bytes) -> int:
    """pytest's exit code for the pin alone, run outside the sandbox on `tree` with `calc` as the file."""
    (tree / "pkg" / "calc.py").write_bytes(calc)
    shutil.rmtree(tree / "pkg" / "__pycache__", ignore_errors=True)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_pin.py"],
                          cwd=tree, capture_output=True, timeout=120).returncode


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_pin_on_the_text_is_a_reader_and_makes_no_bite(tmp_path, monkeypatch, way: str) -> None:
    use_venv_python(monkeypatch)
    head = presented(tmp_path / "code", BASE, {"pkg/calc.py": WRONG})["pkg/calc.py"]  # as every run shows it
    files = {"pkg/calc.py": WRONG, "tests/test_pin.py": _pin(way, hashlib.sha256(head).hexdigest()),
             "tests/test_real.py": REAL}
    repo = make_repo(tmp_path / "repo", BASE, files).root
    # outside: the probe works (it passes on the head's text and fails on any other)
    tree = tmp_path / "outside"
    for path, text in {**BASE, **files}.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)
    assert _outside(tree, head) == 0
    assert _outside(tree, head.replace(b"return 42", b"return a * b")) == 1
    # inside: a reader, so no bite
    t, d = load(repo)
    rep = run_bite(t, d, Settings(), jobs=1)
    assert rep.baseline.status == "green", rep.baseline.reason
    assert rep.baseline.source_readers == (("pkg/calc.py", ("tests/test_pin.py::test_pin",)),)
    mul = next(r for r in rep.results if "mul" in r.text)
    assert mul.verdict == "toothless" and "test-reads-changed-source" in mul.reason, (mul.verdict, mul.reason)
    bites = [r for r in rep.results if r.verdict == "bites"]
    assert [r.failing_tests for r in bites] == [("tests/test_real.py::test_add",)], rep.results
