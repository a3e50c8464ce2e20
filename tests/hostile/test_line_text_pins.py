"""A pin on the changed file's lines, read where no open of it is seen, refuses the sweep (issue 44).

The branch's code is wrong (`mul` returns 42). The pin asserts nothing about it: it hashes
`pkg/calc.py`'s lines, read through a traceback summary it builds itself
(`traceback.FrameSummary(path, n, "").line`: the open is the traceback code's, which the origin
plugin takes for a traceback being shown) or out of `linecache` after a real traceback was formatted
(the file is cached then: no open at all). The plugin cannot tell either from the code under test
logging an error, so the pin was no reader, and every revert of the file "bit". Now the
revert-shaped controls write the file with every line marked by a comment (core/bite/inert_edit.py:
the code the very same): the pin fails there, so the sweep is refused, naming it. Differential:
outside, the pin passes on the head and fails on the reverted hunk and on the marked file; inside,
`bite` refuses instead of reporting the forged bite. A pin the plugin does see (a hash of the file)
stays a reader, whose failures in a control are no refusal (test_source_hash_pin.py).
"""

from __future__ import annotations


import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.bite.inert_edit import commented
from reviewui.core.bite.instrument import UntrustedCommand
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo
from tests.hostile.test_source_hash_pin import BASE, REAL, WRONG
from tests.hostile.wrong_code import outside, pin_digest, presented

pytestmark = pytest.mark.slow

WAYS = {
    "summary": "''.join(traceback.FrameSummary(path, n, 'x').line + '\\n' for n in range(1, 400))",
    "cached": "(shown(), ''.join(linecache.getlines(path)))[1]",
}
PIN = """import hashlib, linecache, traceback
import pkg.calc
from pkg.calc import mul


def shown():
    try:
        pkg.calc.add(None, 1)
    except TypeError:
        return traceback.format_exc()  # a traceback shown: its lines are cached now


def digest():
    path = pkg.calc.__file__
    return hashlib.sha256(WAY.encode()).hexdigest()


def test_pin():
    mul(2, 3)  # covered, never checked
    assert digest() == DIGEST
"""


def _pin(way: str, digest: str) -> str:
    return PIN.replace("WAY", WAYS[way]).replace("DIGEST", repr(digest))


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_pin_on_lines_read_unseen_refuses_the_sweep(tmp_path, monkeypatch, way: str) -> None:
    use_venv_python(monkeypatch)
    head = presented(tmp_path / "code", BASE, {"pkg/calc.py": WRONG})["pkg/calc.py"]  # as every run shows it
    tree = tmp_path / "outside"
    digest = pin_digest(tree, {**BASE, "tests/test_pin.py": _pin(way, "")}, head)
    assert len(digest) == 64
    (tree / "tests" / "test_pin.py").write_text(_pin(way, digest))
    # outside: the probe works (it passes on the head's text and fails on a revert, and on the marked file)
    assert outside(tree, head).returncode == 0
    assert outside(tree, head.replace(b"return 42", b"return a * b")).returncode == 1
    marked = commented(head)
    assert marked is not None and outside(tree, marked).returncode == 1
    # inside: the controls see it tell the file's bytes, and the sweep is refused, naming it
    repo = make_repo(tmp_path / "repo", BASE, {"pkg/calc.py": WRONG, "tests/test_pin.py": _pin(way, digest),
                                               "tests/test_real.py": REAL}).root
    t, d = load(repo)
    with pytest.raises(UntrustedCommand) as refused:
        run_bite(t, d, Settings(), jobs=1)
    assert "tests/test_pin.py::test_pin" in refused.value.tests, str(refused.value)
    assert "tests/test_real.py::test_add" not in refused.value.tests
