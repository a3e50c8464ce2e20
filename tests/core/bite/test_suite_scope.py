"""`uncovered` means no test in the suite runs the lines (issue 32).

The branch changes one test file, so only it is selected; one hunk is run
by an old, unchanged test only, another by no test at all. The whole suite
is measured once at the baseline to find the old test: the first hunk is
graded by it, the second is `uncovered` with the scope that was searched,
and `check --bite`'s warnings say which scope that was.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.bite.report import BiteReport
from reviewui.core.config import Settings
from reviewui.core.findings.bite_rules import bite_findings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo

PAD = "\n\n# one\n# two\n# three\n# four\n# five\n# six\n\n\n"
BASE = {
    "pkg/__init__.py": "",
    "pkg/a.py": "def f(x):\n    return x\n" + PAD + "def g(x):\n    return x\n",
    "pkg/b.py": "def h(x):\n    return x\n",
    "tests/__init__.py": "",
    "tests/test_a.py": "from pkg.a import f\n\n\ndef test_f_old():\n    assert f(1) == 1\n",
    "tests/test_old.py": "from pkg.a import g\n\n\ndef test_g():\n    assert g(-2) == 0\n",
}
BRANCH = {
    "pkg/a.py": "def f(x):\n    return abs(x)\n" + PAD + "def g(x):\n    return max(x, 0)\n",
    "pkg/b.py": "def h(x):\n    return -x\n",
    "tests/test_a.py": "from pkg.a import f\n\n\ndef test_f():\n    assert f(-1) == 1\n",
}


def _verdicts(rep) -> dict[tuple[str, int], tuple[str, str]]:
    return {r.key: (r.verdict, r.scope) for r in rep.results}


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, dict[bool, BiteReport]]:
    """The branch swept once warm and once cold (several tests read the same two sweeps)."""
    home = tmp_path_factory.mktemp("suite-scope")
    with pytest.MonkeyPatch.context() as mp:
        for var in ("CONFIG", "STATE", "CACHE", "DATA"):  # this module's own user dirs, as conftest gives a test
            mp.setenv(f"XDG_{var}_HOME", str(home / var.lower()))
        use_venv_python(mp)
        rb = make_repo(home / "r", BASE, BRANCH)
        t, d = load(rb.root)
        return t, {warm: run_bite(t, d, Settings(warm_runner=warm)) for warm in (True, False)}


@pytest.mark.parametrize("warm", [True, False])
def test_a_hunk_only_an_unchanged_test_runs_is_graded_by_it(
        swept: tuple[object, dict[bool, BiteReport]], warm: bool) -> None:
    t, reports = swept
    rep = reports[warm]
    assert rep.selected_tests == ("tests/test_a.py",)
    assert _verdicts(rep) == {
        ("pkg/a.py", 0): ("bites", "selected"),
        ("pkg/a.py", 1): ("bites", "suite"),
        ("pkg/b.py", 0): ("uncovered", "suite"),
    }
    got = {r.key: r for r in rep.results}
    assert got[("pkg/a.py", 1)].failing_tests == ("tests/test_old.py::test_g",)
    assert got[("pkg/a.py", 1)].tests_run == ("tests/test_old.py::test_g",)
    assert got[("pkg/b.py", 0)].reason == "no test in the suite executes the changed lines"
    assert "the whole suite was searched" in rep.selection
    doc = json.loads(json.dumps(rep.to_json(t)))
    assert [h["scope"] for h in doc["hunks"]] == ["selected", "suite", "suite"]
    text = rep.render_text(t)
    assert text.count("graded by tests found in the whole suite") == 1
    assert "no test in the suite executes the changed lines" in text
    [warning] = [f for f in bite_findings(rep) if f.kind == "toothless-hunk"]
    assert warning.file == "pkg/b.py" and "no test in the suite runs it" in warning.message


def test_warm_and_cold_search_the_suite_alike(swept: tuple[object, dict[bool, BiteReport]]) -> None:
    _, reports = swept
    seen = [[(r.key, r.verdict, r.scope, r.failing_tests, r.tests_run) for r in reports[warm].results]
            for warm in (True, False)]
    assert seen[0] == seen[1]


def test_without_the_suite_search_the_scope_is_the_selected_tests(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "r", BASE, BRANCH)
    t, d = load(rb.root)
    rep = run_bite(t, d, replace(Settings(), full_suite_budget=0.0))
    assert _verdicts(rep) == {
        ("pkg/a.py", 0): ("bites", "selected"),
        ("pkg/a.py", 1): ("uncovered", "selected"),
        ("pkg/b.py", 0): ("uncovered", "selected"),
    }
    got = {r.key: r for r in rep.results}
    assert got[("pkg/a.py", 1)].reason == "no selected test executes the changed lines (full-suite-budget is 0)"
    assert "not searched (full-suite-budget is 0)" in rep.selection
    words = [f.message for f in bite_findings(rep) if f.kind == "toothless-hunk"]
    assert len(words) == 2 and all("no selected test runs it" in w for w in words)


def test_a_suite_slower_than_its_budget_is_not_searched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    slow = "import time\n\n\ndef test_slow():\n    time.sleep(30)\n"
    rb = make_repo(tmp_path / "r", {**BASE, "tests/test_slow.py": slow}, BRANCH)
    t, d = load(rb.root)
    rep = run_bite(t, d, replace(Settings(warm_runner=False), full_suite_budget=3.0))
    got = {r.key: r for r in rep.results}
    assert got[("pkg/a.py", 1)].verdict == "uncovered" and got[("pkg/a.py", 1)].scope == "selected"
    assert "did not finish within full-suite-budget (3s)" in got[("pkg/a.py", 1)].reason


def test_the_budget_is_a_trusted_setting() -> None:
    assert Settings.from_mapping({"full-suite-budget": 90}).full_suite_budget == 90.0
    assert Settings().full_suite_budget > 0
    from reviewui.core.errors import ReviewError

    for bad in (-1, "soon", True):
        with pytest.raises(ReviewError, match="full-suite-budget"):
            Settings.from_mapping({"full-suite-budget": bad})


def test_a_selection_that_holds_every_test_module_is_the_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.core.bite.helpers import feature_repo

    use_venv_python(monkeypatch)
    rb = feature_repo(tmp_path / "r")  # the branch adds the repo's only two test modules
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), hunks=[("pkg/branchy.py", 0)])
    [r] = rep.results
    assert (r.verdict, r.scope) == ("uncovered", "suite")
    assert r.reason == "no test in the suite executes the changed lines"
    assert "whole suite" not in rep.selection  # nothing left to search: no second run


def test_guards_are_looked_for_in_the_suite_as_their_hunk_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    branch = {**BRANCH, "pkg/a.py": "def f(x):\n    return abs(x)\n" + PAD + "def g(x):\n    if x < 0:\n"
              "        return 0\n    return x\n", "pkg/b.py": "def h(x):\n    if x < 0:\n        return -x\n    return x\n"}
    rb = make_repo(tmp_path / "r", BASE, branch)
    t, d = load(rb.root)
    seen = []
    for warm in (True, False):
        got = {r.key: r for r in run_bite(t, d, Settings(warm_runner=warm), guards=True).results}
        g_guards, h_guards = got[("pkg/a.py", 1)].guards, got[("pkg/b.py", 0)].guards
        assert g_guards and all(g.tests_run == ("tests/test_old.py::test_g",) for g in g_guards)
        assert "bites" in {g.verdict for g in g_guards}
        assert h_guards and {(g.verdict, g.reason) for g in h_guards} == {
            ("uncovered", "no test in the suite executes line 2")}
        seen.append([(g.line, g.kind, g.verdict) for g in g_guards + h_guards])
    assert seen[0] == seen[1]
