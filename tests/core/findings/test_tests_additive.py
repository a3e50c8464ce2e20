"""tests-not-additive on test files: each shape fires, each near miss stays quiet."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from reviewui.core.findings.tests_additive import tests_not_additive
from tests.core.findings.helpers import branch, only

SRC = {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a + b\n"}

TESTS = '''import pytest
from pkg.calc import add


def test_add():
    assert add(1, 2) == 3, "adds"


def test_raises():
    with pytest.raises(TypeError):
        add(1, None)


@pytest.mark.parametrize("a,b,want", [(1, 1, 2), (2, 3, 5)])
def test_table(a, b, want):
    assert add(a, b) == want


class TestCalc:
    def test_zero(self):
        assert add(0, 0) == 0

    def test_neg(self):
        assert add(-1, -1) == -2
'''


def run(tmp_path: Path, new_tests: str | None, path: str = "tests/test_calc.py", extra: dict | None = None):
    change: dict = {"pkg/calc.py": "def add(a, b):\n    return b + a\n", path: new_tests}
    change.update(extra or {})
    target, diff, settings = branch(tmp_path / "r", {**SRC, "tests/test_calc.py": TESTS}, change)
    return tests_not_additive(target, diff, settings)


def test_changed_assertion_fires_with_old_and_new(tmp_path: Path) -> None:
    f = only(run(tmp_path, TESTS.replace("add(1, 2) == 3", "add(1, 2) == 4")))
    assert (f.kind, f.severity, f.file, f.line, f.symbol) == ("tests-not-additive", "error", "tests/test_calc.py", 6, "test_add")
    assert "assert add(1, 2) == 3 → assert add(1, 2) == 4" in f.message
    assert "- 6: assert add(1, 2) == 3" in f.evidence and "+ 6: assert add(1, 2) == 4" in f.evidence


def test_removed_assertion_fires(tmp_path: Path) -> None:
    f = only(run(tmp_path, TESTS.replace('    assert add(1, 2) == 3, "adds"\n', "    add(1, 2)\n")))
    assert "check removed in test_add" in f.message and f.symbol == "test_add"


def test_changed_raises_fires(tmp_path: Path) -> None:
    f = only(run(tmp_path, TESTS.replace("pytest.raises(TypeError)", "pytest.raises(Exception)")))
    assert "pytest.raises(TypeError)" in f.message and "pytest.raises(Exception)" in f.message


def test_changed_parametrize_expected_value_fires(tmp_path: Path) -> None:
    f = only(run(tmp_path, TESTS.replace("(2, 3, 5)", "(2, 3, 6)")))
    assert "parametrize case" in f.message and "(2, 3, 5) → (2, 3, 6)" in f.message
    assert f.symbol == "test_table"


def test_removed_parametrize_case_fires(tmp_path: Path) -> None:
    f = only(run(tmp_path, TESTS.replace(", (2, 3, 5)]", "]")))
    assert "parametrize case (a,b,want) removed" in f.message


def test_added_parametrize_case_is_quiet(tmp_path: Path) -> None:
    assert run(tmp_path, TESTS.replace("(2, 3, 5)]", "(2, 3, 5), (0, 0, 0)]")) == []


def test_parametrize_cases_from_a_module_constant(tmp_path: Path) -> None:
    base = TESTS + "\nCASES = [(1, 2), (3, 4)]\n\n\n@pytest.mark.parametrize('a,b', CASES)\ndef test_c(a, b):\n    assert a < b\n"
    target, diff, settings = branch(
        tmp_path / "r", {**SRC, "tests/test_calc.py": base}, {"tests/test_calc.py": base.replace("(3, 4)", "(4, 4)")}
    )
    f = only(tests_not_additive(target, diff, settings))
    assert "(3, 4) → (4, 4)" in f.message


def test_removed_test_fires(tmp_path: Path) -> None:
    new = TESTS.replace('def test_add():\n    assert add(1, 2) == 3, "adds"\n', "")
    f = only(run(tmp_path, new))
    assert f.message == "existing test removed: test_add" and f.symbol == "test_add"


def test_renamed_test_fires_and_names_both(tmp_path: Path) -> None:
    f = only(run(tmp_path, TESTS.replace("def test_add():", "def _test_add():")))
    assert "renamed: test_add → _test_add" in f.message
    assert f.line == 5


def test_removed_method_and_class(tmp_path: Path) -> None:
    f = only(run(tmp_path, TESTS.replace("    def test_neg(self):\n        assert add(-1, -1) == -2\n", "")))
    assert f.symbol == "TestCalc.test_neg" and f.line == 19  # the class that remains
    cut = TESTS[: TESTS.index("class TestCalc")]
    g = only(run(tmp_path / "2", cut))
    assert "test class (2 tests) removed: TestCalc" in g.message


def test_renamed_class_is_one_finding(tmp_path: Path) -> None:
    f = only(run(tmp_path, TESTS.replace("class TestCalc:", "class CalcChecks:")))
    assert "renamed: TestCalc → CalcChecks" in f.message


@pytest.mark.parametrize(
    "edit",
    [
        ("def test_add():", "@pytest.mark.skip(reason='flaky')\ndef test_add():"),
        ("def test_add():", "@pytest.mark.xfail\ndef test_add():"),
        ("def test_add():", "@pytest.mark.skipif(True, reason='x')\ndef test_add():"),
        ('def test_add():\n', "def test_add():\n    pytest.skip('later')\n"),
        ("class TestCalc:", "@pytest.mark.skip\nclass TestCalc:"),
    ],
)
def test_skip_added_to_existing_test_fires(tmp_path: Path, edit: tuple[str, str]) -> None:
    f = only(run(tmp_path, TESTS.replace(*edit)))
    assert "skip/xfail added to existing test" in f.message


def test_module_level_skip_fires(tmp_path: Path) -> None:
    f = only(run(tmp_path, TESTS.replace("from pkg.calc import add\n", "from pkg.calc import add\n\npytestmark = pytest.mark.skip\n")))
    assert "whole module" in f.message and f.line == 4


def test_self_assert_changed_fires(tmp_path: Path) -> None:
    base = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.assertEqual(1 + 1, 2)\n"
    target, diff, settings = branch(
        tmp_path / "r", {"tests/test_u.py": base}, {"tests/test_u.py": base.replace("assertEqual", "assertNotEqual")}
    )
    f = only(tests_not_additive(target, diff, settings))
    assert "self.assertEqual(1 + 1, 2) → self.assertNotEqual(1 + 1, 2)" in f.message and f.symbol == "T.test_x"


def test_helper_check_changed_fires(tmp_path: Path) -> None:
    base = "def check(x):\n    assert x > 0\n\n\ndef test_x():\n    check(1)\n"
    target, diff, settings = branch(tmp_path / "r", {"tests/test_h.py": base}, {"tests/test_h.py": base.replace("x > 0", "x > -1")})
    assert only(tests_not_additive(target, diff, settings)).symbol == "check"


# --- near misses -------------------------------------------------------------


def test_added_assertion_and_added_test_are_quiet(tmp_path: Path) -> None:
    new = TESTS.replace('assert add(1, 2) == 3, "adds"\n', 'assert add(1, 2) == 3, "adds"\n    assert add(2, 2) == 4\n')
    new += "\n\n@pytest.mark.skip\ndef test_new():\n    assert add(5, 5) == 10\n"
    assert run(tmp_path, new) == []


def test_import_line_that_only_gains_names_is_quiet(tmp_path: Path) -> None:
    new = TESTS.replace("from pkg.calc import add\n", "from pkg.calc import add, sub\n")
    assert run(tmp_path, new, extra={"pkg/calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"}) == []


def test_reformatting_and_rewording_the_message_are_quiet(tmp_path: Path) -> None:
    new = TESTS.replace('assert add(1, 2) == 3, "adds"', "assert add(1,2)==3, 'adds up'").replace(
        '[(1, 1, 2), (2, 3, 5)]', "[\n        (1, 1, 2),\n        (2, 3, 5),\n    ]"
    )
    assert run(tmp_path, new) == []


def test_moving_a_test_within_the_file_is_quiet(tmp_path: Path) -> None:
    add_test = 'def test_add():\n    assert add(1, 2) == 3, "adds"\n\n\n'
    new = TESTS.replace(add_test, "") + "\n\n" + add_test
    assert run(tmp_path, new) == []


def test_new_test_file_is_quiet(tmp_path: Path) -> None:
    target, diff, settings = branch(tmp_path / "r", SRC, {"tests/test_new.py": "import pytest\n\n@pytest.mark.skip\ndef test_a():\n    assert False\n"})
    assert tests_not_additive(target, diff, settings) == []


# --- whole files, other languages ------------------------------------------------


def test_deleted_test_file_fires_listing_tests(tmp_path: Path) -> None:
    f = only(run(tmp_path, None))
    assert "deleted with 5 test(s)" in f.message and "test_add" in f.message


def test_deleting_a_file_without_tests_is_quiet(tmp_path: Path) -> None:
    target, diff, settings = branch(tmp_path / "r", {"tests/__init__.py": "", "tests/util.py": "X = 1\n"}, {"tests/util.py": None})
    assert tests_not_additive(target, diff, settings) == []


def test_renaming_out_of_collection_fires(tmp_path: Path) -> None:
    target, diff, settings = branch(tmp_path / "r", {**SRC, "tests/test_calc.py": TESTS}, {"tests/test_calc.py": None, "tests/calc_checks.py": TESTS})
    f = only(tests_not_additive(target, diff, settings))
    assert "no longer collects it: tests/test_calc.py → tests/calc_checks.py" in f.message


def test_renamed_test_file_keeps_comparing(tmp_path: Path) -> None:
    target, diff, settings = branch(
        tmp_path / "r", {**SRC, "tests/test_calc.py": TESTS},
        {"tests/test_calc.py": None, "tests/test_calc2.py": TESTS.replace("== 3,", "== 4,")},
    )
    f = only(tests_not_additive(target, diff, settings))
    assert f.file == "tests/test_calc2.py" and "== 3 → " in f.message


RUST = """use ledger::write;

#[test]
fn balances() {
    let l = write(None);
    assert_eq!(l.total(), 0);
    assert!(l.is_empty());
}

#[test]
fn rejects() {
    assert_eq!(write(Some(-1)).err(), Some(Error::Negative));
}
"""


def test_rust_assertions_rewritten_fire_by_line(tmp_path: Path) -> None:
    new = RUST.replace("assert_eq!(l.total(), 0);", "assert_eq!(l.total(), 1);").replace(
        "assert!(l.is_empty());", "assert!(!l.is_empty());"
    )
    target, diff, settings = branch(tmp_path / "r", {"tests/ledger_test.rs": RUST}, {"tests/ledger_test.rs": new})
    found = tests_not_additive(target, diff, settings)
    assert len(found) == 2
    assert "assert_eq!(l.total(), 0); → assert_eq!(l.total(), 1);" in found[0].message
    assert found[0].line == 6


def test_rust_added_test_and_ignore_on_existing_test(tmp_path: Path) -> None:
    added = RUST + "\n#[test]\n#[ignore]\nfn extra() {\n    assert_eq!(1, 1);\n}\n"
    target, diff, settings = branch(tmp_path / "r", {"tests/ledger_test.rs": RUST}, {"tests/ledger_test.rs": added})
    assert tests_not_additive(target, diff, settings) == []
    ignored = RUST.replace("#[test]\nfn rejects", "#[test]\n#[ignore]\nfn rejects")
    target, diff, settings = branch(tmp_path / "r2", {"tests/ledger_test.rs": RUST}, {"tests/ledger_test.rs": ignored})
    f = only(tests_not_additive(target, diff, settings))
    assert "skip added" in f.message and f.line == 11


def test_comment_lines_are_not_checks(tmp_path: Path) -> None:
    commented = RUST.replace("#[test]\nfn balances", "// assert_eq!(old, 1) used to be here\n#[test]\nfn balances")
    new = commented.replace("// assert_eq!(old, 1) used to be here", "// see the ledger docs")
    target, diff, settings = branch(tmp_path / "r", {"tests/ledger_test.rs": commented}, {"tests/ledger_test.rs": new})
    assert tests_not_additive(target, diff, settings) == []


def test_unparsable_python_falls_back_to_lines(tmp_path: Path) -> None:
    broken = TESTS.replace("add(1, 2) == 3", "add(1, 2) == 4").replace("class TestCalc:", "class TestCalc(")
    f = only(run(tmp_path, broken))
    assert "check changed" in f.message and "== 4" in f.message


def test_snapshot_changed_fires_and_hostile_content_is_kept_verbatim(tmp_path: Path) -> None:
    snap = "# name: test_render\n  '[bold red]x[/bold red]\x1b[31m'\n"
    target, diff, settings = branch(
        tmp_path / "r", {"tests/__snapshots__/test_ui.ambr": snap}, {"tests/__snapshots__/test_ui.ambr": snap.replace("x[", "y[")}
    )
    f = only(tests_not_additive(target, diff, settings))
    assert "snapshot" in f.message and "\x1b[31m" in f.evidence


def test_binary_and_non_utf8_test_files_do_not_crash(tmp_path: Path) -> None:
    latin = "def test_x():\n    assert 'caf\xe9' == 'caf\xe9'\n".encode("latin-1")
    target, diff, settings = branch(
        tmp_path / "r",
        {"tests/data.bin": bytes(range(256)), "tests/test_l.py": latin},
        {"tests/data.bin": bytes(range(255, -1, -1)), "tests/test_l.py": latin.replace(b"== 'caf", b"!= 'caf")},
    )
    f = only(tests_not_additive(target, diff, settings))
    assert f.file == "tests/test_l.py" and "!=" in f.message


# --- a check made strictly stronger is `info`, never an error (issue 39) ---------------------------------


@pytest.mark.parametrize(("old", "new", "why"), [
    # an added conjunct, every old condition kept
    ("assert add(1, 2) == 3", "assert add(1, 2) == 3 and add(2, 1) == 3", "keeps every old condition"),
    # `==` replacing a weaker comparison of the same left side (holds on the literals)
    ("assert add(1, 2) > 0", "assert add(1, 2) == 3", "`== 3` replaces `> 0`"),
    ("assert add(1, 2) >= 3", "assert add(1, 2) == 3", "`==` replaces `>=` of the same two sides"),
    ("assert add(1, 2) != 0", "assert 3 == add(1, 2)", "`== 3` replaces `!= 0`"),
    ("assert add(1, 2) in (3, 4)", "assert add(1, 2) == 3", "`== 3` replaces `in (3, 4)`"),
    ("assert add(1, 2)", "assert add(1, 2) == 3", "the truth test of add(1, 2)"),
    ("assert add(1, 2) is not None", "assert add(1, 2) == 3", "`== 3` replaces `is not None`"),
])
def test_a_stricter_check_is_info(tmp_path: Path, old: str, new: str, why: str) -> None:
    base = TESTS.replace('assert add(1, 2) == 3, "adds"', old)
    target, diff, settings = branch(tmp_path / "r", {**SRC, "tests/test_calc.py": base},
                                    {"pkg/calc.py": "def add(a, b):\n    return b + a\n",
                                     "tests/test_calc.py": base.replace(old, new)})
    f = only(tests_not_additive(target, diff, settings))
    assert (f.kind, f.severity, f.symbol) == ("tests-not-additive", "info", "test_add"), f.message
    assert "made stricter" in f.message and why in f.message


@pytest.mark.parametrize(("old", "new"), [
    ("assert add(1, 2) > 0", "assert add(1, 2) == -1"),  # -1 > 0 is false: not implied
    ("assert add(1, 2) == 3", "assert add(1, 2) > 0"),  # weaker
    ("assert add(1, 2) == 3 and add(2, 1) == 3", "assert add(1, 2) == 3"),  # a conjunct dropped
    ("assert add(1, 2) > x", "assert add(1, 2) == y"),  # nothing to check it on
    ("assert add(1, 2) == 3", "assert add(1, 2) == 3 or True"),  # an `or` is no conjunct
])
def test_a_check_not_shown_stricter_is_still_an_error(tmp_path: Path, old: str, new: str) -> None:
    base = TESTS.replace('assert add(1, 2) == 3, "adds"', old)
    target, diff, settings = branch(tmp_path / "r", {**SRC, "tests/test_calc.py": base},
                                    {"pkg/calc.py": "def add(a, b):\n    return b + a\n",
                                     "tests/test_calc.py": base.replace(old, new)})
    assert only(tests_not_additive(target, diff, settings)).severity == "error"


def test_the_old_check_kept_as_a_parametrize_row_is_info(tmp_path: Path) -> None:
    new = TESTS.replace('def test_add():\n    assert add(1, 2) == 3, "adds"\n',
                        '@pytest.mark.parametrize("a,b,want", [(1, 2, 3), pytest.param(5, 5, 10, id="ten")])\n'
                        "def test_add(a, b, want):\n    assert add(a, b) == want\n")
    f = only(run(tmp_path, new))
    assert (f.severity, f.symbol) == ("info", "test_add")
    assert "kept as the parametrize row (1, 2, 3)" in f.message
    # the old value not among the rows: an error, as before
    g = only(run(tmp_path / "again", new.replace("(1, 2, 3)", "(1, 2, 4)")))
    assert g.severity == "error"


def test_unittest_asserts_read_as_their_comparisons(tmp_path: Path) -> None:
    base = ("import unittest\nfrom pkg.calc import add\n\n\nclass T(unittest.TestCase):\n"
            "    def test_x(self):\n        self.assertGreater(add(1, 2), 0)\n")
    target, diff, settings = branch(tmp_path / "r", {**SRC, "tests/test_u.py": base},
                                    {"pkg/calc.py": "def add(a, b):\n    return b + a\n",
                                     "tests/test_u.py": base.replace("self.assertGreater(add(1, 2), 0)",
                                                                     "self.assertEqual(add(1, 2), 3)")})
    assert only(tests_not_additive(target, diff, settings)).severity == "info"


@pytest.mark.parametrize("old, new", [
    ("a  b", "a   b"),  # whitespace inside a string: the one-line form collapses it
    ("x" * 120 + "a", "x" * 120 + "b"),  # a change past the one-line form's cut
])
def test_a_change_the_one_line_form_hides_shows_its_first_difference(tmp_path: Path, old: str, new: str) -> None:
    def tests(want: str) -> str:
        return f'def test_words():\n    assert " ".join(["a", "b"]) == "{want}"\n'

    target, diff, settings = branch(tmp_path / "r", {**SRC, "tests/test_words.py": tests(old)},
                                    {"tests/test_words.py": tests(new)})
    f = only(tests_not_additive(target, diff, settings))
    assert (f.kind, f.symbol) == ("tests-not-additive", "test_words")
    checks = [ast.unparse(ast.parse(tests(want)).body[0].body[0]) for want in (old, new)]
    first = next(n for n, (x, y) in enumerate(zip(*checks, strict=False)) if x != y)
    assert f"they first differ at character {first + 1}," in f.message, f.message
    pair = f.message.rsplit(": ", 1)[1].removesuffix(")")
    shown_old, shown_new = (ast.literal_eval(side.replace("·", " ")) for side in pair.split(" → "))
    assert shown_old != shown_new
    # each side as the check reads (ast.unparse quotes strings with ')
    assert shown_old in tests(old).replace('"', "'") and shown_new in tests(new).replace('"', "'")
