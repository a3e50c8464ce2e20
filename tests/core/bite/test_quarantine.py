"""Tests red at the head are quarantined, not fatal (issue 32).

The shape from the wild: a test reads the installed distribution's metadata
(`importlib.metadata.version`), which a package imported from the tree does
not have, so it fails at the head whatever the branch does. It is reported
by id with its first error line, left out, and every hunk is graded against
the green tests; only when nothing is green is the baseline red.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.bite.report import BiteReport
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo

PAD = "\n\n# one\n# two\n# three\n# four\n# five\n# six\n\n\n"
"""Keeps the three functions' changes in three hunks."""
BASE = {
    "pkg/__init__.py": "__version__ = '1.0'\n",
    "pkg/core.py": "def clamp(x):\n    return x\n" + PAD + "def scale(x):\n    return x\n" + PAD + "def describe():\n    return 'pkg'\n",
    "pkg/names.py": "NAME = 'pkg'\n",
    "tests/__init__.py": "",
    "tests/test_core.py": (
        "from pkg.core import clamp, scale\nfrom pkg.names import NAME  # noqa: F401\n\n\n"
        "def test_clamp():\n    assert clamp(-1) == 0\n\n\n"
        "def test_scale():\n    assert scale(2) == 4\n"
    ),
    "tests/test_meta.py": (
        "from importlib.metadata import version\n\nimport pkg\nfrom pkg.core import describe\n\n\n"
        "def test_installed_version_matches():\n"
        "    name = describe()\n"
        "    assert version('reviewui-not-installed-' + name) == pkg.__version__\n"
    ),
}
BRANCH = {
    "pkg/core.py": ("def clamp(x):\n    return max(x, 0)\n" + PAD + "def scale(x):\n    return x * 2\n" + PAD
                    + "def describe():\n    return 'pkg'.upper().lower()\n"),
    # Run at import time: its revert runs every test, and the red one must not make it "bite".
    "pkg/names.py": "NAME = 'pkg-core'\n",
}
RED = "tests/test_meta.py::test_installed_version_matches"


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, dict[bool, BiteReport]]:
    """The metadata shape swept once warm and once cold (several tests read the same two sweeps)."""
    home = tmp_path_factory.mktemp("quarantine")
    with pytest.MonkeyPatch.context() as mp:
        for var in ("CONFIG", "STATE", "CACHE", "DATA"):  # this module's own user dirs, as conftest gives a test
            mp.setenv(f"XDG_{var}_HOME", str(home / var.lower()))
        use_venv_python(mp)
        rb = make_repo(home / "r", BASE, BRANCH)
        t, d = load(rb.root)
        return t, {warm: run_bite(t, d, Settings(warm_runner=warm)) for warm in (True, False)}


@pytest.mark.parametrize("warm", [True, False])
def test_a_metadata_test_red_at_head_is_quarantined_and_the_hunks_graded(
        swept: tuple[object, dict[bool, BiteReport]], warm: bool) -> None:
    t, reports = swept
    rep = reports[warm]
    b = rep.baseline
    assert b.status == "green" and b.quarantined == (RED,)
    assert RED not in b.tests and "tests/test_core.py::test_clamp" in b.tests
    verdicts = {(r.file, r.index): r.verdict for r in rep.results}
    # clamp and scale bite; describe runs only inside the quarantined test; nothing checks NAME.
    assert verdicts == {("pkg/core.py", 0): "bites", ("pkg/core.py", 1): "bites", ("pkg/core.py", 2): "uncovered",
                        ("pkg/names.py", 0): "toothless"}
    assert "quarantined" in rep.results[2].reason
    assert all(RED not in r.failing_tests for r in rep.results)
    doc = json.loads(json.dumps(rep.to_json(t)))
    [entry] = doc["baseline"]["quarantined"]
    assert entry["test"] == RED and "PackageNotFoundError" in entry["message"]
    assert doc["baseline"]["status"] == "green" and "quarantined" in doc["baseline"]["reason"]
    text = rep.render_text(t)
    assert f"QUARANTINED {RED}: " in text and "1 test red at the head quarantined" in text


def test_warm_and_cold_quarantine_alike(swept: tuple[object, dict[bool, BiteReport]]) -> None:
    _, reports = swept
    seen = [(rep.baseline.quarantined, tuple((r.key, r.verdict, r.failing_tests) for r in rep.results))
            for rep in (reports[True], reports[False])]
    assert seen[0] == seen[1]


def test_nothing_green_is_still_a_red_baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    base = {k: v for k, v in BASE.items() if k != "tests/test_core.py"}
    rb = make_repo(tmp_path / "r", base, BRANCH)
    t, d = load(rb.root)
    rep = run_bite(t, d, replace(Settings(), warm_runner=False))
    assert rep.baseline.status == "red" and rep.baseline.quarantined == ()
    assert rep.baseline.failing_tests == (RED,)
    assert {r.verdict for r in rep.results} == {"skipped"}
    assert rep.exit_code == 3


def test_an_approve_is_told_what_was_quarantined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewui.core.evidence import EvidenceLedger
    from reviewui.core.state import ReviewState

    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "r", BASE, BRANCH)
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), hunks=[("pkg/core.py", 0)])
    ledger = EvidenceLedger(ReviewState(tmp_path / "state.json", "agent/work"))
    assert ledger.against("approve") == []
    ledger.add_report(rep)
    assert ledger.against("approve") == [f"1 test red at the head quarantined (graded nothing): {RED}"]


@pytest.mark.parametrize("warm, named", [(True, False), (False, True), (True, True)])
def test_a_module_that_cannot_be_imported_at_head_is_quarantined_by_a_second_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: bool, named: bool) -> None:
    use_venv_python(monkeypatch)
    # The metadata is read at import time: pytest cannot even collect the module.
    meta = ("from importlib.metadata import version\n\nVERSION = version('reviewui-not-installed-pkg')\n\n\n"
            "def test_version():\n    assert VERSION\n")
    # `named`: the branch touches both test modules, so the runs name them (`--ignore` does not reach a named path).
    touched = {"tests/test_meta.py": meta + "# touched\n", "tests/test_core.py": BASE["tests/test_core.py"] + "# touched\n"}
    rb = make_repo(tmp_path / "r", {**BASE, "tests/test_meta.py": meta}, {**BRANCH, **(touched if named else {})})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(warm_runner=warm))
    assert bool(rep.selected_tests) == named
    b = rep.baseline
    assert b.status == "green", b.reason
    assert b.quarantined == ("tests/test_meta.py",)
    assert "PackageNotFoundError" in b.messages["tests/test_meta.py"]
    verdicts = {(r.file, r.index): r.verdict for r in rep.results}
    # describe() is now run by no test at all; NAME's revert runs the whole suite without the module.
    assert verdicts == {("pkg/core.py", 0): "bites", ("pkg/core.py", 1): "bites", ("pkg/core.py", 2): "uncovered",
                        ("pkg/names.py", 0): "toothless"}
    [entry] = rep.to_json(t)["baseline"]["quarantined"]
    assert entry["test"] == "tests/test_meta.py" and "PackageNotFoundError" in entry["message"]
