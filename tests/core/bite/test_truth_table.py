"""The per-test truth table on real repositories: a new test that passes on the base, one that only errors
there, one that fails there by assertion (and which reverts make it fail), and an old test the branch broke."""

from __future__ import annotations

import pytest

from reviewui.core.bite.report import Baseline, BiteReport, HunkResult
from reviewui.core.bite.truth_table import ChangedTest, build_table, classify, function_id
from reviewui.core.findings.test_notices_name import test_only_notices_name as notices_name_rule
from reviewui.core.findings.test_passes_on_base import test_passes_on_base as passes_on_base_rule
from reviewui.core.run.junit import TestOutcome
from reviewui.core.session import ReviewSession, RunOptions
from tests.core.bite.helpers import use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

GREEN_BASE = {
    "pkg/__init__.py": "",
    "pkg/calc.py": "def add(a, b):\n    return a + b\n\n\ndef clamp(x, lo, hi):\n    return x\n",
    "tests/__init__.py": "",
    "tests/test_old.py": "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
GREEN_BRANCH = {
    "pkg/calc.py": ("def add(a, b):\n    return a + b\n\n\ndef clamp(x, lo, hi):\n    if x < lo:\n        return lo\n"
                    "    return x\n"),
    "pkg/ops.py": "def sub(a, b):\n    return a - b\n",
    # one case fails on the base (it needs the change), the other passes there (it needs nothing of it)
    "tests/test_clamp.py": ("import pytest\n\nfrom pkg.calc import clamp\n\n\n"
                            "@pytest.mark.parametrize(('x', 'want'), [(-5, 0), (3, 3)], ids=['low', 'mid'])\n"
                            "def test_clamp(x, want):\n    assert clamp(x, 0, 10) == want\n"),
    # errors on the base: the name it imports is new
    "tests/test_sub.py": "from pkg.ops import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n",
}


@pytest.fixture(scope="module")
def green(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    use_venv_python(mp)
    mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    rb = make_repo(tmp_path_factory.mktemp("green") / "repo", GREEN_BASE, GREEN_BRANCH)
    session = ReviewSession.open(rb.root, "agent/work")
    report = session.bite(guards=True)
    table = session.tests_table(report)
    yield session, report, table
    mp.undo()


def rows(table):
    return {t.id: t for t in table.tests}


def test_each_new_case_gets_its_base_outcome(green) -> None:
    _, report, table = green
    assert report.baseline.status == "green" and table.status == "complete", table.reason
    got = {i: (t.change, t.head, t.base) for i, t in rows(table).items()}
    assert got == {
        "tests/test_clamp.py::test_clamp[low]": ("added", "passes", "fails"),
        "tests/test_clamp.py::test_clamp[mid]": ("added", "passes", "passes"),
        "tests/test_sub.py::test_sub": ("added", "passes", "errors"),
    }
    assert "pkg.ops" in rows(table)["tests/test_sub.py::test_sub"].base_message
    assert table.regressions == () and table.already_red == ()


def test_the_reverts_that_make_a_test_fail_are_named(green) -> None:
    _, report, table = green
    low = rows(table)["tests/test_clamp.py::test_clamp[low]"]
    assert any(b.guard_line is None and b.file == "pkg/calc.py" for b in low.bitten_by)
    assert any(b.guard_line == 6 for b in low.bitten_by), low.bitten_by  # the `if x < lo` guard
    mid = rows(table)["tests/test_clamp.py::test_clamp[mid]"]
    assert not any(b.guard_line is None for b in mid.bitten_by)  # the hunk reverted, x=3 still comes back 3
    assert "/slots/" not in rows(table)["tests/test_sub.py::test_sub"].base_message  # scratch paths cut out


def test_findings_for_a_test_passing_on_base_and_one_only_noticing_a_name(green) -> None:
    session, report, table = green
    passes = passes_on_base_rule(table)
    assert [(f.kind, f.severity, f.symbol, f.file) for f in passes] == [
        ("test-passes-on-base", "warning", "tests/test_clamp.py::test_clamp[mid]", "tests/test_clamp.py")]
    names = notices_name_rule(table)
    assert [(f.kind, f.severity, f.symbol) for f in names] == [
        ("test-only-notices-name", "info", "tests/test_sub.py::test_sub")]
    kinds = {f.kind for f in session.findings(report, table)}
    assert {"test-passes-on-base", "test-only-notices-name"} <= kinds


REGRESSION_BASE = {
    "pkg/__init__.py": "",
    "pkg/calc.py": "def add(a, b):\n    return a + b\n",
    "tests/__init__.py": "",
    "tests/test_old.py": ("from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                          "def test_add_negative():\n    assert add(-1, 1) == 0\n\n\n"
                          "def test_already_red():\n    assert add(1, 1) == 3\n"),
}
REGRESSION_BRANCH = {
    "pkg/calc.py": "def add(a, b):\n    return a + b if a >= 0 else a - b\n",
    "tests/test_new.py": "from pkg.calc import add\n\n\ndef test_add_big():\n    assert add(10, 5) == 15\n",
}


def test_an_old_test_the_branch_turned_red_is_a_regression(tmp_path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "repo", REGRESSION_BASE, REGRESSION_BRANCH)
    # The old tests run only when selected: here the whole suite is (the base run then runs it too).
    session = ReviewSession.open(rb.root, "agent/work", run=RunOptions(all_tests=True))
    report = session.bite()
    # issue 32: the red old tests are quarantined beside the green new one, no longer a red baseline
    assert report.baseline.status == "green"
    assert set(report.baseline.quarantined) == {"tests/test_old.py::test_add_negative",
                                                "tests/test_old.py::test_already_red"}
    table = session.tests_table(report)
    assert table.status == "complete", table.reason
    assert [t.id for t in table.regressions] == ["tests/test_old.py::test_add_negative"]
    assert table.regressions[0].base == "passes" and table.regressions[0].head == "fails"
    assert table.already_red == ("tests/test_old.py::test_already_red",)  # red on the base too: not the branch's
    assert [(t.id, t.base) for t in table.tests] == [("tests/test_new.py::test_add_big", "passes")]


def _report(tests, failing=(), results=()) -> BiteReport:
    return BiteReport(Baseline("red" if failing else "green", failing_tests=tuple(failing), tests=tuple(tests)),
                      tuple(results), (), "python -m pytest")


def test_classify_separates_missing_names_from_failures() -> None:
    # issue 39: "missing name" only for a name the branch adds, missing while importing or collecting;
    # an AttributeError or NameError the code under test raises is the behaviour (in real fixes, the bug).
    new = {"x", "pkg.ops"}
    assert classify(TestOutcome("t::a", "failed", "AssertionError: assert 1 == 2"), None, new)[0] == "fails"
    assert classify(TestOutcome("t::a", "failed", "AttributeError: module 'pkg' has no attribute 'x'"), None,
                    new)[0] == "fails"  # in the test's body: the behaviour
    assert classify(TestOutcome("t::a", "failed", "NameError: name 'x' is not defined"), None, new)[0] == "fails"
    assert classify(TestOutcome("t::a", "failed", "TypeError: bad operand"), None, new)[0] == "fails"
    assert classify(TestOutcome("t::a", "failed", "ImportError: cannot import name 'x' from 'pkg'"), None,
                    new)[0] == "errors"  # a local import of the new name
    assert classify(TestOutcome("t::a", "failed", "ImportError: cannot import name 'y' from 'pkg'"), None,
                    new)[0] == "fails"  # not a name the branch adds
    assert classify(None)[0] == "not-run"
    coll = TestOutcome("t.py", "error", "ImportError while importing test module",
                       "E   ModuleNotFoundError: No module named 'pkg.ops'", collection=True)
    assert classify(None, coll, new) == ("errors", coll.message)
    assert classify(None, coll, {"x"}) == ("fails", coll.message)  # the missing module is not the branch's
    attr = TestOutcome("t.py", "error", "AttributeError: module 'pkg' has no attribute 'x'", collection=True)
    assert classify(None, attr, new)[0] == "errors"  # at collection (a decorator, a module constant)
    assert function_id("t.py::C::test_x[a-[1]]") == "t.py::C::test_x"


def test_build_table_is_pure_and_reads_bites_from_the_sweep() -> None:
    hunk = HunkResult("src/m.py", 1, "@@ -1 +1 @@", "", "bites", failing_tests=("t.py::test_x[1]",))
    report = _report(["t.py::test_x[1]", "t.py::test_x[2]", "t.py::test_old"], results=[hunk])
    base = [TestOutcome("t.py::test_x[1]", "failed", "assert 0"), TestOutcome("t.py::test_x[2]", "passed"),
            TestOutcome("t.py::test_old", "passed")]
    table = build_table([ChangedTest("t.py::test_x", "changed", "t.py", 3)], report, base, head="h", base="b")
    assert [(t.id, t.change, t.base, [b.words() for b in t.bitten_by]) for t in table.tests] == [
        ("t.py::test_x[1]", "changed", "fails", ["src/m.py hunk 2"]),
        ("t.py::test_x[2]", "changed", "passes", []),
    ]
    assert table.summary()["passes_on_base"] == 1 and table.regressions == ()


def test_an_attribute_error_the_base_raises_is_the_behaviour_not_a_missing_name(tmp_path, monkeypatch) -> None:
    # The shape of most real fixes' fail-to-pass tests: the base raises AttributeError (the bug), no name is new.
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "repo", {
        "pkg/__init__.py": "", "pkg/cart.py": "def total(items):\n    return sum(i.price for i in items)\n",
    }, {
        "pkg/cart.py": ("def total(items):\n    return sum(i['price'] if isinstance(i, dict) else i.price "
                        "for i in items)\n"),
        "tests/test_cart.py": "from pkg.cart import total\n\n\ndef test_dicts():\n    assert total([{'price': 2}]) == 2\n",
    })
    session = ReviewSession.open(rb.root, "agent/work")
    table = session.tests_table(session.bite())
    [row] = table.tests
    assert (row.base, row.head) == ("fails", "passes") and "has no attribute 'price'" in row.base_message
    assert notices_name_rule(table) == []
