"""Hypothesis's scan of the project's own modules reads no changed file, and takes no bite away.

Hypothesis (6.131 and later) reads the source of every local module when tests are collected (and
again as examples are made) to draw examples near its constants. In a sweep the changed files are
local modules: the scan's reads, made where no test runs, were read by every test collected, so in
a project with one Hypothesis test every guard and revert of a changed file was graded `toothless`
("only tests that read pkg/scale.py as data failed"), and the file's text steered the Hypothesis
tests' inputs. The origin plugin now keeps the changed files out of the scan (read_audit.py,
`hide_from_hypothesis`). Differential: the scan reads the file where the plugin is not in force.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reviewui.core.bite import guard_batch
from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from tests import project_python
from tests.core.bite.helpers import load
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

BASE = {"pkg/__init__.py": "", "tests/__init__.py": "", "pkg/keep.py": "K = 1\n"}
SCALE = "def scale(x):\n    if x > 987654:\n        return x * 2\n    return x\n"
BRANCH = {
    "pkg/scale.py": SCALE,
    "tests/test_scale.py": ("from pkg.scale import scale\n\n\ndef test_scale():\n"
                            "    assert scale(1_000_000) == 2_000_000\n    assert scale(5) == 5\n"),
    # a property test elsewhere: only its presence makes Hypothesis scan the project's modules
    "tests/test_prop.py": ("from hypothesis import given, settings, strategies as st\n\n\n"
                           "@settings(max_examples=5, database=None)\n@given(st.integers())\n"
                           "def test_ints(n):\n    assert isinstance(n, int)\n"),
}


def _python_with_hypothesis(monkeypatch: pytest.MonkeyPatch) -> str:
    py = project_python.python(("hypothesis",))
    monkeypatch.setenv("PATH", str(Path(py).parent) + os.pathsep + os.environ.get("PATH", ""))
    return py


def test_the_scan_reads_the_changed_file_where_nothing_hides_it(tmp_path: Path, monkeypatch) -> None:
    py = _python_with_hypothesis(monkeypatch)
    rb = make_repo(tmp_path / "repo", BASE, BRANCH)
    rb.checkout("agent/work")
    probe = textwrap.dedent("""
        import json, sys
        import pkg.scale
        from hypothesis.internal.conjecture.providers import _get_local_constants
        print(json.dumps(987654 in _get_local_constants().integers))
    """)
    out = subprocess.run([py, "-c", probe], cwd=rb.root, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(rb.root)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "true"  # Hypothesis took the changed file's constant: it read the file


def test_a_guard_bites_beside_a_hypothesis_test(tmp_path: Path, monkeypatch) -> None:
    _python_with_hypothesis(monkeypatch)
    rb = make_repo(tmp_path / "repo", BASE, BRANCH)
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=1, guards=True)
    assert rep.baseline.status == "green", rep.baseline.reason
    [hunk] = [h for h in rep.results if h.file == "pkg/scale.py"]
    never = [g for g in hunk.guards if "never true" in g.description]
    assert never and never[0].verdict == "bites", [(g.description, g.verdict, g.reason) for g in hunk.guards]
    assert never[0].failing_tests == ("tests/test_scale.py::test_scale",)
    assert not any("as data" in (g.reason or "") for g in hunk.guards)


def test_the_guards_beside_a_hypothesis_test_are_graded_in_the_batch_session(tmp_path: Path, monkeypatch) -> None:
    """Hypothesis wrote `.hypothesis/` into the tree from the first fork that ran its test; the session's
    tree had then changed under the other forks, and every guard was handed back to run alone."""
    _python_with_hypothesis(monkeypatch)
    rb = make_repo(tmp_path / "repo", BASE, BRANCH)
    t, d = load(rb.root)
    handed_back: list[str] = []
    real = guard_batch._grade

    def grade(g, reply, root, session):  # type: ignore[no-untyped-def]
        if "fallback" in reply:
            handed_back.append(str(reply["fallback"]))
        return real(g, reply, root, session)

    monkeypatch.setattr(guard_batch, "_grade", grade)
    rep = run_bite(t, d, Settings(), jobs=1, guards=True)
    assert rep.baseline.status == "green", rep.baseline.reason
    assert sum(len(h.guards) for h in rep.results) >= 4
    assert handed_back == []  # every guard graded in its session's fork


def test_only_the_changed_files_are_hidden_from_the_scan(tmp_path: Path) -> None:
    """In one Python: the scan skips the changed file and still takes an unchanged module's constants."""
    (tmp_path / "changed.py").write_text("C = 424242\n")
    (tmp_path / "kept.py").write_text("D = 535353\n")
    probe = textwrap.dedent(f"""
        import json, sys
        sys.path[:0] = [{str(tmp_path)!r}, {str(Path(__file__).resolve().parents[3])!r}]
        from reviewui.core.inside import read_audit
        read_audit._sources.add({str((tmp_path / "changed.py").resolve())!r})
        import changed, kept
        from hypothesis.internal.conjecture import providers
        read_audit.hide_from_hypothesis()
        read_audit.hide_from_hypothesis()  # twice: wrapped once
        ints = providers._get_local_constants().integers
        print(json.dumps([424242 in ints, 535353 in ints,
                          providers.is_local_module_file.__closure__ is not None]))
    """)
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[false, true, true]"
