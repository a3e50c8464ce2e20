"""Reuse must never be wrong: over a series of pushes, a sweep that reuses kept grades gives every hunk and
guard the verdict a fresh sweep gives, while it did reuse what it could.

Each push is applied to the agent's branch, then two sweeps grade it: one with a grade store of its own
that it reads and fills (the reusing one, run first so it never sees the fresh sweep's grades), and one
with no store at all (fresh). The pushes: a code edit, a test edit, a conftest edit that flips a verdict,
a config edit, a file no test reads, a test helper edit, another hunk starting to use a name a hunk
defines (the cross-hunk grade flips), and a rebase onto a moved base.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.bite.report import BiteReport
from reviewui.core.config import Settings
from reviewui.core.store.db import EvidenceStore
from tests.core.bite.helpers import VENV_BIN, load
from tests.gitrepo import RepoBuilder

pytestmark = pytest.mark.slow

UTIL = ("def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n\n\ndef one():\n    return 1\n\n\n"
        "def two():\n    return 2\n")
BASE = {
    "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
    "pkg/__init__.py": "",
    "pkg/shapes.py": "def area(w, h):\n    return w * h\n",
    "pkg/text.py": "def shout(s):\n    return s.upper()\n",
    "pkg/util.py": UTIL,
    "pkg/report.py": "def report(rows):\n    return len(rows)\n",  # no test imports it
    "tests/__init__.py": "",
    "tests/helpers.py": "def loud(s):\n    return s.upper()\n",
    "tests/shapes/__init__.py": "",
    "tests/shapes/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef sides():\n    return [(2, 3)]\n",
    "tests/test_text.py": "from pkg.text import shout\n\n\ndef test_shout():\n    assert shout('a') == 'A'\n",
}

AGENT = {
    "pkg/shapes.py": ("def area(w, h):\n    if w < 0 or h < 0:\n        raise ValueError('negative side')\n"
                      "    return w * h\n"),
    "pkg/text.py": "def shout(s):\n    if not s:\n        return ''\n    return s.upper() + '!'\n",
    # two hunks: clamp's body (its own test), and lerp added (a def runs at import: every selected test)
    "pkg/util.py": UTIL.replace("    return max", "    if lo > hi:\n        lo, hi = hi, lo\n    return max")
                   + "\n\ndef lerp(a, b, t):\n    return a + (b - a) * t\n",
    "tests/shapes/test_shapes.py": (
        "import pytest\n\nfrom pkg.shapes import area\n\n\ndef test_area(sides):\n    for w, h in sides:\n"
        "        if w < 0 or h < 0:\n            with pytest.raises(ValueError):\n                area(w, h)\n"
        "        else:\n            assert area(w, h) == w * h\n"),
    "tests/test_text.py": ("from pkg.text import shout\nfrom tests.helpers import loud\n\n\n"
                           "def test_shout():\n    assert shout('a') == loud('a') + '!'\n"),
    "tests/test_util.py": ("import pkg.util as u\n\n\ndef test_clamp():\n    assert u.clamp(5, 10, 0) == 5\n"
                           "    assert u.clamp(-1, 0, 3) == 0\n\n\ndef test_lerp():\n    assert u.lerp(0, 10, 0.5) == 5\n"),
}

REPORT_USES_LERP = ("from pkg.util import lerp\n\n\ndef report(rows):\n    return len(rows)\n\n\n"
                    "def halfway(n):\n    return lerp(0, n, 0.5)\n")
"""Another hunk, in a module no test of lerp's hunk imports, starts using lerp: the cross-hunk grading
now calls reverting lerp `broken` (another hunk needs it), though nothing lerp's tests read changed."""

PUSHES: list[tuple[str, dict[str, str | None]]] = [
    ("code edit", {"pkg/text.py": "def shout(s):\n    if not s:\n        return '-'\n    return s.upper() + '!'\n"}),
    ("test edit", {"tests/test_text.py": AGENT["tests/test_text.py"] + "\n\ndef test_empty():\n    assert shout('') == '-'\n"}),
    ("conftest edit", {"tests/shapes/conftest.py": BASE["tests/shapes/conftest.py"].replace("[(2, 3)]", "[(2, 3), (-1, 2)]")}),
    ("config edit", {"pyproject.toml": BASE["pyproject.toml"] + "markers = [\"slow: slow tests\"]\n"}),
    ("untouched file", {"scripts/tool.py": "print('a tool no test imports')\n"}),
    ("helper edit", {"tests/helpers.py": "def loud(s):\n    return s.upper() + ''\n"}),
    ("cross-hunk use", {"pkg/report.py": REPORT_USES_LERP}),
]
"""Each push: what it writes on the branch. The rebase comes last (see the fixture)."""

CLAMP, LERP, SHAPES, TEXT = ("pkg/util.py", 0), ("pkg/util.py", 1), ("pkg/shapes.py", 0), ("pkg/text.py", 0)
EXPECT_REUSED = {
    "code edit": {SHAPES, CLAMP},            # lerp's tests are every selected test, test_text's among them
    "test edit": {SHAPES, CLAMP},
    "conftest edit": {TEXT, CLAMP},
    "config edit": set(),                   # a file that is not Python: every reach holds it
    "untouched file": {SHAPES, TEXT, CLAMP, LERP},
    "helper edit": {SHAPES, CLAMP},         # test_text imports the helper
    "cross-hunk use": {SHAPES, TEXT, CLAMP},  # lerp is now used by another hunk
    "rebase": {SHAPES, TEXT},               # util.py moved under both its hunks
}
"""The hunks (file, index) a reusing sweep must have reused after each push, and no other."""


def _sweep(root: Path, store: EvidenceStore | None) -> BiteReport:
    t, diff = load(root)
    book = store.grades("differential") if store is not None else None
    return run_bite(t, diff, Settings(), guards=True, jobs=2, grades=book)


def _verdicts(report: BiteReport) -> dict[tuple, str]:
    out: dict[tuple, str] = {}
    for r in report.results:
        out[(r.file, r.header)] = r.verdict
        for g in r.guards:
            out[(r.file, r.header, g.line, g.kind, g.start, g.replacement)] = g.verdict
    return out


@pytest.fixture(scope="module")
def pushes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[tuple[str, BiteReport, BiteReport]]]:
    mp = pytest.MonkeyPatch()
    mp.setenv("PATH", VENV_BIN + ":" + __import__("os").environ.get("PATH", ""))
    tmp = tmp_path_factory.mktemp("differential")
    rb = RepoBuilder(tmp / "repo")
    rb.commit(BASE, "base")
    rb.branch("agent/work")
    rb.commit(AGENT, "agent")
    rb.checkout("main")
    store = EvidenceStore.open(tmp / "reusing.sqlite")
    out = [("first sweep", _sweep(rb.root, store), _sweep(rb.root, None))]
    for name, files in PUSHES:
        rb.checkout("agent/work")
        rb.commit(files, name)
        rb.checkout("main")
        out.append((name, _sweep(rb.root, store), _sweep(rb.root, None)))
    # main moves (util.py gains a function above the agent's hunk), the agent rebases onto it
    rb.commit({"pkg/util.py": "def sign(x):\n    return (x > 0) - (x < 0)\n\n\n" + UTIL}, "upstream")
    rb.checkout("agent/work")
    rb.git("rebase", "-q", "main")
    rb.checkout("main")
    out.append(("rebase", _sweep(rb.root, store), _sweep(rb.root, None)))
    store.close()
    yield out
    mp.undo()


def test_reusing_and_fresh_sweeps_agree_on_every_hunk_and_guard(pushes) -> None:
    for name, reusing, fresh in pushes:
        assert reusing.baseline.status == fresh.baseline.status == "green", name
        assert _verdicts(reusing) == _verdicts(fresh), name
        assert any(r.guards for r in fresh.results), name  # the guards are compared too


def test_each_push_reused_exactly_what_it_left_unchanged(pushes) -> None:
    first = pushes[0][1]
    assert {r.evidence for r in first.results} == {"fresh"}
    for name, reusing, _ in pushes[1:]:
        reused = {r.key for r in reusing.results if r.evidence == "reused"}
        assert reused == EXPECT_REUSED[name], name
        guards = {g.evidence for r in reusing.results for g in r.guards}
        assert ("reused" in guards) == bool(EXPECT_REUSED[name]), name
    for _, _, fresh in pushes:
        assert {r.evidence for r in fresh.results} | {g.evidence for r in fresh.results for g in r.guards} == {"fresh"}


def test_the_pushes_flip_verdicts_that_reuse_would_have_got_wrong(pushes) -> None:
    by = {name: {r.key: r.verdict for r in fresh.results} for name, _, fresh in pushes}
    assert by["code edit"][SHAPES] == "toothless"
    assert by["conftest edit"][SHAPES] == "bites"  # the fixture now feeds a negative side
    assert by["helper edit"][LERP] == "bites"
    assert by["cross-hunk use"][LERP] == "broken"  # lerp is now used by another hunk


def test_a_witness_sweep_never_reuses_a_grade_kept_without_one(tmp_path: Path, monkeypatch) -> None:
    """A grade kept by a sweep that did not look for witnesses carries none: a sweep that asks for them
    grades afresh (its toothless guard then has a witness), and keeps grades the next such sweep reuses."""
    from reviewui.core.witness.budget import Budget

    monkeypatch.setenv("PATH", VENV_BIN + ":" + __import__("os").environ.get("PATH", ""))
    rb = RepoBuilder(tmp_path / "repo")
    rb.commit({"pkg/__init__.py": "", "pkg/cap.py": "def cap(x):\n    return x\n", "tests/__init__.py": ""}, "base")
    rb.branch("agent/work")
    rb.commit({"pkg/cap.py": "def cap(x):\n    if x > 10:\n        return 10\n    return x\n",
               "tests/test_cap.py": "from pkg.cap import cap\n\n\ndef test_small():\n    assert cap(3) == 3\n"},
              "agent")
    rb.checkout("main")
    store = EvidenceStore.open(tmp_path / "grades.sqlite")

    def sweep(witness: Budget | None) -> BiteReport:
        t, diff = load(rb.root)
        return run_bite(t, diff, Settings(), guards=True, jobs=1, grades=store.grades("w"), witness=witness)

    plain = sweep(None)
    assert [r.verdict for r in plain.results] == ["toothless"]
    assert all(g.witness is None for r in plain.results for g in r.guards)
    looked = sweep(Budget())
    evidence = {r.evidence for r in looked.results} | {g.evidence for r in looked.results for g in r.guards}
    assert evidence == {"fresh"}
    assert any(g.witness is not None and g.witness.found for r in looked.results for g in r.guards)
    again = sweep(Budget())
    assert {r.evidence for r in again.results} == {"reused"}
    assert any(g.witness is not None and g.witness.found for r in again.results for g in r.guards)
    store.close()
