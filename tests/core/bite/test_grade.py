"""Grading one revert run: a bite needs a real failure; collection and cross-hunk name errors are `broken`."""

from __future__ import annotations

from reviewui.core.bite.grade import defined_names, grade_exit_code, grade_pytest, referenced_name
from reviewui.core.bite.coverage_map import CoverageMap, statement_spans
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import parse_hunks
from reviewui.core.run.junit import TestOutcome, node_id_from
from reviewui.core.run.runner import RunResult


def hunk_of(added: list[str], removed: list[str] = (), path: str = "pkg/m.py", status: str = "modified"):
    body = "".join(f"-{x}\n" for x in removed) + "".join(f"+{x}\n" for x in added)
    patch = f"--- a/{path}\n+++ b/{path}\n@@ -1,{len(removed)} +1,{len(added)} @@\n{body}"
    [h] = parse_hunks(path, patch)
    f = FileDiff(path, None, status, "source", False, len(added), len(removed), None, None, None, None, None)
    return f, h


def run(*tests: TestOutcome, rc: int = 1, **kw) -> RunResult:
    return RunResult(command=("python",), returncode=rc, seconds=0.1, pytest=True, tests=tests, **kw)


def failed(node: str, message: str) -> TestOutcome:
    return TestOutcome(node, "failed", message)


def test_defined_names() -> None:
    f, h = hunk_of([
        "def helper(x):", "class Thing:", "    self.value = 1", "LIMIT: int = 3", "a, b = 1, 2",
        "import os.path as osp", "from .util import (one,", "    two as deux)", "    call(kw=1,", "x == y",
    ])
    names = defined_names(f, h)
    assert {"helper", "Thing", "value", "LIMIT", "a", "b", "osp", "one", "two", "deux"} <= names
    assert "kw" not in names and "x" not in names
    f2, h2 = hunk_of(["X = 1"], path="pkg/newmod.py", status="added")
    assert {"newmod", "pkg.newmod"} <= defined_names(f2, h2)


def test_failure_about_a_name_the_hunk_defines_is_broken() -> None:
    names = frozenset({"helper"})
    for msg in (
        "NameError: name 'helper' is not defined",
        "ImportError: cannot import name 'helper' from 'pkg.m' (/x/pkg/m.py)",
        "AttributeError: module 'pkg.m' has no attribute 'helper'",
    ):
        g = grade_pytest(run(failed("t.py::test_a", msg)), names)
        assert g.verdict == "broken" and "cross-hunk" in g.reason and "helper" in g.reason, msg


def test_failure_about_another_name_is_a_bite() -> None:
    # The hunk corrected a misspelt attribute: reverting brings back `vlaue`, which the hunk does not define.
    f, h = hunk_of(["    return self.value"], ["    return self.vlaue"])
    g = grade_pytest(run(failed("t.py::test_a", "AttributeError: 'Box' object has no attribute 'vlaue'")),
                     defined_names(f, h))
    assert g.verdict == "bites" and g.failing_tests == ("t.py::test_a",)


def test_mixed_failures_bite_with_only_the_real_ones() -> None:
    g = grade_pytest(run(failed("t.py::a", "NameError: name 'helper' is not defined"),
                         failed("t.py::b", "assert 3 == 4")), frozenset({"helper"}))
    assert g.verdict == "bites" and g.failing_tests == ("t.py::b",)


def test_collection_and_exit_codes() -> None:
    col = TestOutcome("tests/test_x.py", "error", "ImportError: cannot import name 'zz'", collection=True)
    assert grade_pytest(run(col, rc=2), frozenset()).verdict == "broken"
    assert grade_pytest(run(rc=5), frozenset()).verdict == "broken"
    assert grade_pytest(run(rc=4), frozenset()).verdict == "broken"
    assert grade_pytest(run(rc=0), frozenset()).verdict == "toothless"
    assert grade_pytest(run(rc=1, junit_error="no JUnit report was written"), frozenset()).verdict == "error"
    assert grade_pytest(run(rc=1), frozenset()).verdict == "error"
    assert grade_pytest(RunResult(("x",), None, 3.0, timed_out=True, pytest=True), frozenset()).verdict == "timeout"
    assert grade_exit_code(RunResult(("x",), 0, 0.1)).verdict == "toothless"
    assert grade_exit_code(RunResult(("x",), 7, 0.1, output="boom\n")).reason == "exit code 7: boom"


def test_referenced_name_ignores_other_errors() -> None:
    assert referenced_name(failed("a", "ValueError: name 'x' is not defined")) is None
    assert referenced_name(failed("a", "ModuleNotFoundError: No module named 'pkg.newmod'")) == "pkg.newmod"


def test_node_ids_from_junit_fields() -> None:
    assert node_id_from("tests.test_x", "test_y", "tests/test_x.py") == "tests/test_x.py::test_y"
    assert node_id_from("tests.test_x.TestC", "test_y[a.b]", "tests/test_x.py") == "tests/test_x.py::TestC::test_y[a.b]"
    assert node_id_from("tests.test_x.TestC", "test_y", None) == "tests/test_x.py::TestC::test_y"


SRC = (
    "import os\n"                      # 1
    "\n"                               # 2
    "def f(x):\n"                      # 3
    "    total = (x +\n"               # 4
    "             1)\n"                # 5
    "    # a comment\n"                # 6
    "    return total\n"               # 7
)


def test_coverage_selection_by_statement() -> None:
    call = "t.py::test_f|call"
    cov = CoverageMap({"pkg/m.py": {1: frozenset({""}), 3: frozenset({""}), 4: frozenset({call}), 7: frozenset({call})}},
                      frozenset({"t.py::test_f"}))

    def sel(patch_body: str, header: str):
        [h] = parse_hunks("pkg/m.py", f"--- a/pkg/m.py\n+++ b/pkg/m.py\n{header}\n{patch_body}")
        return cov.select(h, SRC)

    # the continuation line of a multi-line statement counts through its first line
    s = sel("     total = (x +\n-             2)\n+             1)\n", "@@ -4,2 +4,2 @@")
    assert s.choice == "tests" and s.tests == ("t.py::test_f",)
    # an added comment has no executable line; replacing one may have removed code, so it runs
    assert sel("             1)\n+    # a comment\n", "@@ -5,1 +5,2 @@").choice == "uncovered"
    assert sel("-    # old\n+    # a comment\n", "@@ -6,1 +6,1 @@").choice == "tests"
    # a pure removal between two body statements is executed when they are
    assert sel("             1)\n-    print(x)\n     # a comment\n", "@@ -5,3 +5,2 @@").choice == "tests"
    # a changed def line runs at import time: every selected test
    assert sel("-def f(y):\n+def f(x):\n", "@@ -3,1 +3,1 @@").choice == "all"
    # no coverage data for a file that no test imported: uncovered
    [h] = parse_hunks("pkg/m.py", "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -7,1 +7,1 @@\n-    return 0\n+    return total\n")
    assert CoverageMap({}, frozenset()).select(h, SRC).choice == "uncovered"
    assert cov.select(h, SRC).choice == "tests"
    assert statement_spans("def (:\n") is None


def test_text_report_neutralises_terminal_escapes() -> None:
    from reviewui.core.bite.report import Baseline, BiteReport, HunkResult

    r = HunkResult("pkg/m.py", 0, "@@ -1 +1 @@", "", "bites", failing_tests=("t.py::test_\x1b[31m",),
                   messages={"t.py::test_\x1b[31m": "[bold red]x[/bold red] \x1b]0;title\x07"})
    text = BiteReport(Baseline("green", tests=("t.py::test_\x1b[31m",)), (r,), ("t.py",), "pytest").render_text()
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b[31m" in text and "[bold red]x[/bold red]" in text


def test_a_removed_name_only_a_test_uses_is_a_bite_with_a_user_lookup() -> None:
    # With the branch's hunks known (user_of given): no other code hunk uses `cache`, so the
    # failing test checks exactly what the hunk adds: a bite. A code user makes it cross-hunk.
    msg = "AttributeError: 'function' object has no attribute 'cache'"
    names = frozenset({"cache"})
    g = grade_pytest(run(failed("t.py::test_attr", msg)), names, lambda n: None)
    assert g.verdict == "bites" and g.failing_tests == ("t.py::test_attr",)
    g = grade_pytest(run(failed("t.py::test_attr", msg)), names, lambda n: "pkg/use.py:7")
    assert g.verdict == "broken" and g.reason.startswith("cross-hunk: cache is defined by this hunk and used by pkg/use.py:7")


def test_a_config_key_the_hunk_adds_and_another_hunk_reads_is_cross_hunk() -> None:
    # flask 4f7156f: hunk 1 adds `"TRUSTED_HOSTS": None,` to the default config, hunk 2 reads
    # self.config["TRUSTED_HOSTS"]; reverting hunk 1 alone fails every request with a KeyError.
    f, h = hunk_of(['            "TRUSTED_HOSTS": None,'], path="pkg/app.py")
    names = defined_names(f, h)
    assert "TRUSTED_HOSTS" in names
    msg = "KeyError: 'TRUSTED_HOSTS'"
    assert referenced_name(failed("t.py::test_host", msg)) == "TRUSTED_HOSTS"
    g = grade_pytest(run(failed("t.py::test_host", msg)), names, lambda n: "pkg/app.py:447")
    assert g.verdict == "broken" and g.reason.startswith("cross-hunk: TRUSTED_HOSTS is defined by this hunk")
    g = grade_pytest(run(failed("t.py::test_host", msg)), names, lambda n: None)  # only a test reads it
    assert g.verdict == "bites"
    g = grade_pytest(run(failed("t.py::test_host", "KeyError: 'OTHER'")), names, lambda n: "pkg/app.py:447")
    assert g.verdict == "bites"  # a key the hunk does not add


def test_a_unittest_revert_failing_only_on_a_name_another_hunk_uses_is_broken() -> None:
    # gweis/isodate 89f8089 under `python -m unittest`: hunk 0 imports ROUND_FLOOR for hunk 1; reverting hunk 0
    # alone makes every test error on that name (the revert broke the branch; it tested nothing).
    out = ("ERROR: test_parse (isodate.tests.test_time.TestTime.test_parse)\nTraceback (most recent call last):\n"
           "NameError: name 'ROUND_FLOOR' is not defined\n\nRan 41 tests in 0.1s\n\nFAILED (errors=41)\n")
    run = RunResult(("python",), 1, 0.1, output=out)
    users = {"ROUND_FLOOR": "src/isodate/isotime.py hunk 2"}
    g = grade_exit_code(run, frozenset({"ROUND_FLOOR"}), users.get)
    assert g.verdict == "broken" and "ROUND_FLOOR" in g.reason
    # a real assertion beside it, a name no other hunk uses, or one the revert does not remove: it bites
    assert grade_exit_code(RunResult(("python",), 1, 0.1, output=out + "FAIL: test_x (m.T.test_x)\n"),
                           frozenset({"ROUND_FLOOR"}), users.get).verdict == "bites"
    assert grade_exit_code(run, frozenset({"ROUND_FLOOR"}), {}.get).verdict == "bites"
    assert grade_exit_code(run, frozenset({"OTHER"}), users.get).verdict == "bites"


def test_a_revert_is_parsed_only_when_a_failure_is_about_a_name(monkeypatch) -> None:
    """The cross-hunk analysis (two parses of the module per revert) runs only for a failure it can
    excuse; the verdict of a rename's other half is still `broken`."""
    from pathlib import Path

    from reviewui.core.bite import crosshunk, revert_grade
    from reviewui.core.bite.origin import Observed
    from reviewui.core.bite.runctx import Observation
    from reviewui.core.diff import Diff

    f, h = hunk_of(["    return sum(items)"], ["    return old_sum(items)"])
    head, reverted = b"def total(items):\n    return sum(items)\n", b"def total(items):\n    return old_sum(items)\n"
    calls: list[str] = []
    real = crosshunk.removed_by_revert

    def counted(a: str, b: str):  # type: ignore[no-untyped-def]
        calls.append(a)
        return real(a, b)

    monkeypatch.setattr(revert_grade, "removed_by_revert", counted)

    def grade(*tests: TestOutcome):  # type: ignore[no-untyped-def]
        seen = Observation(run(*tests), Observed({}, {}, True), None)
        return revert_grade.grade_revert(Diff("/r", "a", "b"), f, h, seen, ("t.py::a",), Path("/s"), head, reverted, True)

    r = grade(failed("t.py::a", "assert 3 == 6"))
    assert r.verdict == "bites" and calls == []
    r = grade(failed("t.py::a", "NameError: name 'old_sum' is not defined"))
    assert r.verdict == "broken" and "old_sum" in r.reason and len(calls) == 1
