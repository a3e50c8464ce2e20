"""Guard reverts run for real: each kind bitten and toothless, coverage-guided, JSON and Stryker contracts."""

from __future__ import annotations

import os

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.bite.guard_report import GUARD_STRYKER
from reviewui.core.config import Settings
from reviewui.core.findings.guard_rules import guard_findings
from reviewui.core.notes.records import BiteRecord
from tests.core.bite.helpers import VENV_BIN, load
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

LAB_BASE = {
    "pkg/__init__.py": "",
    "pkg/lab.py": "def old(x):\n    y = x + 1\n    return y\n",
}

LAB = '''def old(x):
    y = x + 1
    if y > 10:
        return 10
    return y


def sign(x):
    if x < 0:
        return -1
    return 1


def is_adult(age):
    return age >= 18


def first_word(text):
    if not text:
        return ""
    return text.split()[0]


def contains(items, target):
    found = False
    for item in items:
        if item == target:
            found = True
            break
    return found


def can_edit(admin, owner, locked):
    if admin or (owner and not locked):
        return True
    return False


def normalise(name):
    name = name.strip()
    name = name.lower()
    return name


def warm_cache(store):
    store["ready"] = True


def pop_first_even(items):
    for i, item in enumerate(items):
        if item % 2 == 0:
            del items[i]
            return item
    return None


def never_called(x):
    y = x * 2
    return y
'''

TESTS = '''from pkg.lab import can_edit, contains, first_word, is_adult, normalise, old, pop_first_even, sign, warm_cache


def test_old():
    assert old(1) == 2


def test_sign():
    assert sign(-3) == -1
    assert sign(3) == 1


def test_adult():
    assert is_adult(18) is True


def test_first_word():
    assert first_word("hello world") == "hello"


def test_contains():
    assert contains([1, 2], 2) is True
    assert contains([1, 2], 3) is False


def test_can_edit():
    assert can_edit(True, False, True) is True
    assert can_edit(False, True, False) is True
    assert can_edit(False, False, False) is False


def test_normalise():
    assert normalise("Bob") == "bob"


def test_warm_cache_runs():
    warm_cache({})


def test_pop_first_even():
    assert pop_first_even([1, 2, 4]) == 2
'''


def line_of(text: str, needle: str) -> int:
    return next(n for n, row in enumerate(text.splitlines(), 1) if needle in row)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    mp.setenv("PATH", VENV_BIN + os.pathsep + os.environ["PATH"])
    mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    rb = make_repo(tmp_path_factory.mktemp("lab") / "repo", LAB_BASE,
                   {"pkg/lab.py": LAB, "tests/__init__.py": "", "tests/test_lab.py": TESTS})
    t, d = load(rb.root)
    seen: list = []
    report = run_bite(t, d, Settings(), jobs=2, guards=True, on_result=seen.append)
    yield t, d, report, seen
    mp.undo()


def guards(report) -> dict[tuple[int, str, str], object]:
    return {(g.line, g.kind, g.replacement): g for r in report.results for g in r.guards}


def verdict(report, needle: str, kind: str, replacement: str) -> str:
    g = guards(report)[(line_of(LAB, needle), kind, replacement)]
    return g.verdict  # type: ignore[attr-defined]


def test_condition_bitten_and_toothless(lab) -> None:
    _, _, report, _ = lab
    assert report.baseline.status == "green" and report.baseline.coverage_guided
    assert verdict(report, "if x < 0:", "condition", "True") == "bites"
    assert verdict(report, "if x < 0:", "condition", "False") == "bites"
    assert verdict(report, "if not text:", "condition", "True") == "bites"
    assert verdict(report, "if not text:", "condition", "False") == "toothless"


def test_operand_bitten_and_toothless(lab) -> None:
    _, _, report, _ = lab
    line = "if admin or (owner and not locked):"
    assert verdict(report, line, "operand", "(owner and not locked)") == "bites"
    assert verdict(report, line, "operand", "admin") == "bites"
    assert verdict(report, line, "operand", "(not locked)") == "bites"
    assert verdict(report, line, "operand", "owner") == "toothless"  # no test has an owner on a locked doc


def test_boundary_bitten_and_toothless(lab) -> None:
    _, _, report, _ = lab
    assert verdict(report, "return age >= 18", "boundary", "(age > 18)") == "bites"
    assert verdict(report, "if x < 0:", "boundary", "(x <= 0)") == "toothless"  # sign(0) is never asked


def test_early_exit_bitten_toothless_and_uncovered(lab) -> None:
    _, _, report, _ = lab
    assert verdict(report, "return item", "early-exit", "pass") == "bites"
    assert verdict(report, "break", "early-exit", "pass") == "toothless"
    # `return -1` is all its branch does: the condition's `never true` stands for it
    assert (line_of(LAB, "return -1"), "early-exit", "pass") not in guards(report)
    g = guards(report)[(line_of(LAB, "def never_called"), "body", "return None")]
    assert g.verdict == "uncovered" and g.seconds == 0 and g.tests_run == ()  # type: ignore[attr-defined]


def test_statement_bitten_and_toothless(lab) -> None:
    _, _, report, _ = lab
    assert verdict(report, "name = name.lower()", "statement", "pass") == "bites"
    assert verdict(report, "name = name.strip()", "statement", "pass") == "toothless"


def test_body_bitten_and_toothless(lab) -> None:
    _, _, report, _ = lab
    assert verdict(report, "def sign(x):", "body", "return None") == "bites"
    assert verdict(report, "def warm_cache(store):", "body", "return None") == "toothless"


def test_untouched_lines_of_a_changed_function_get_no_guards(lab) -> None:
    _, _, report, _ = lab
    lines = {g.line for g in guards(report).values()}
    assert line_of(LAB, "if y > 10:") in lines
    assert not {1, 2, line_of(LAB, "    return y")} & lines  # old()'s base lines: no body, no statements


def test_coverage_guided_selection_runs_only_tests_executing_the_line(lab) -> None:
    _, _, report, _ = lab
    g = guards(report)[(line_of(LAB, "if x < 0:"), "condition", "True")]
    assert g.tests_run == ("tests/test_lab.py::test_sign",)  # type: ignore[attr-defined]
    assert g.failing_tests == ("tests/test_lab.py::test_sign",)  # type: ignore[attr-defined]
    g = guards(report)[(line_of(LAB, "name = name.strip()"), "statement", "pass")]
    assert g.tests_run == ("tests/test_lab.py::test_normalise",)  # type: ignore[attr-defined]


def test_results_stream_complete_with_their_guards(lab) -> None:
    _, _, report, seen = lab
    assert len(seen) == len(report.results) == 1
    assert seen[0].guards == report.results[0].guards and len(seen[0].guards) >= 20


def test_json_contract(lab) -> None:
    t, _, report, _ = lab
    doc = report.to_json(t)
    hunk = doc["hunks"][0]
    assert [set(g) for g in hunk["guards"]] == [
        {"line", "kind", "description", "verdict", "failing_tests", "reason", "seconds", "evidence"}  # 40: evidence
    ] * len(hunk["guards"])
    kinds = {g["kind"] for g in hunk["guards"]}
    assert kinds == {"condition", "operand", "boundary", "early-exit", "statement", "body"}
    first = next(g for g in hunk["guards"] if g["line"] == line_of(LAB, "if x < 0:") and g["kind"] == "condition")
    assert first["verdict"] == "bites" and first["failing_tests"] == ["tests/test_lab.py::test_sign"]
    # the summary counts hunks; guards are counted apart
    assert sum(doc["summary"].values()) == 1
    assert sum(doc["guard_summary"].values()) == len(hunk["guards"])
    assert doc["guard_summary"]["toothless"] == sum(1 for g in hunk["guards"] if g["verdict"] == "toothless") >= 6
    plain = report.__class__(report.baseline, report.results, report.selected_tests, report.test_command)
    assert "guards" not in plain.to_json(t)["hunks"][0] and "guard_summary" not in plain.to_json(t)


def test_stryker_contract(lab) -> None:
    t, _, report, _ = lab
    doc = report.to_stryker(t)
    mutants = doc["files"]["pkg/lab.py"]["mutants"]
    assert mutants[0]["mutatorName"] == "hunk-revert"
    guard_mutants = mutants[1:]
    assert len(guard_mutants) == len(report.results[0].guards)
    assert len({m["id"] for m in mutants}) == len(mutants)
    assert {m["mutatorName"] for m in guard_mutants} == {
        "condition", "operand", "boundary", "early-exit", "statement", "body"}
    assert {m["status"] for m in guard_mutants} <= set(GUARD_STRYKER.values())
    boundary = next(m for m in guard_mutants if m["mutatorName"] == "boundary" and m["replacement"] == "(age > 18)")
    row = line_of(LAB, "return age >= 18")
    assert boundary["location"] == {"start": {"line": row, "column": 12}, "end": {"line": row, "column": 21}}
    assert boundary["status"] == "Killed" and boundary["killedBy"] == ["tests/test_lab.py::test_adult"]
    toothless = next(m for m in guard_mutants if m["mutatorName"] == "early-exit" and m["status"] == "Survived")
    assert "killedBy" not in toothless
    source_line = doc["files"]["pkg/lab.py"]["source"].splitlines()[row - 1]
    assert source_line[11:20] == "age >= 18"


def test_toothless_guard_findings_and_verdict_evidence(lab) -> None:
    _, _, report, _ = lab
    found = guard_findings(report)
    toothless = [g for r in report.results for g in r.guards if g.verdict == "toothless"]
    assert len(found) == len(toothless) and {f.kind for f in found} == {"toothless-guard"}
    assert {f.severity for f in found} == {"warning"}
    assert {(f.file, f.line) for f in found} == {(g.file, g.line) for g in toothless}
    record = BiteRecord.from_result(report.results[0])
    assert len(record.guards) == len(report.results[0].guards)
    assert {(g.line, g.verdict) for g in record.guards} >= {(line_of(LAB, "break"), "toothless")}


def test_text_report_lists_guards_apart(lab) -> None:
    t, _, report, _ = lab
    text = report.render_text(t)
    assert f"guard line {line_of(LAB, 'break')}: early exit `break` removed — every test still passes" in text
    assert "\nguards: bites " in text
