"""What reviewui takes from a witness run (witness/literal.py, search.read_answer): only checked pieces."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from reviewui.core.config import Settings
from reviewui.core.errors import ReviewError
from reviewui.core.witness import literal
from reviewui.core.witness.budget import Budget
from reviewui.core.witness.model import Witness
from reviewui.core.witness.search import Check, Found, read_answer
from reviewui.core.witness.targets import Target
from reviewui.core.witness.verify import compose

PROJECT = frozenset({"pkg", "coder"})
IMPORTS = literal.Imports.of([["coder.history", "Message", "Message"], ["pkg.backoff", "Policy", "Policy"],
                              ["pkg", "mod", "mod"], ["pathlib", "PurePosixPath", "PurePosixPath"],
                              ["builtins", "ValueError", "ValueError"]], PROJECT)


@pytest.mark.parametrize("source", [
    "None", "-1.5", "float('nan')", "b'\\x00'", "[1, (2,), {3}, {'k': frozenset({1})}]",
    "Message(role='user', reasoning='', tool_calls=[Policy(max_delay=2.0)])", "mod.Inner.Deep(1)",
    "_obj(Message, n=1)", "set()", "complex(1, -2)", "Policy", "Message.role.upper()", "PurePosixPath('/x')",
    "ValueError('x')",
])
def test_sources_made_of_literals_and_imported_names_pass(source: str) -> None:
    literal.check(source, IMPORTS)


@pytest.mark.parametrize("source", [
    "__import__('os').system('rm -rf ~')", "open('/etc/passwd')", "(lambda: 0)()", "Message.__init__.__globals__",
    "mod.__dict__", "[x for x in mod]", "Message(**{'a': 1})", "Message(*[1])", "f'{Message}'", "1 + 2",
    "mod[0]", "eval('1')", "getattr(mod, 'x')", "Message(role=1)\nimport os", "PurePosixPath.unlink(x)",
    "(yield 1)", "Message if 1 else Policy", "'x' * 10**9", "[*mod]", "{**mod}", "Policy(:=1)", "x" * 20000,
    "ValueError.mro()", "float.fromhex('1')",
])
def test_anything_else_is_refused(source: str) -> None:
    with pytest.raises(literal.NotLiteral):
        literal.check(source, IMPORTS)


@pytest.mark.parametrize("raw", [
    [["os", "system", "system"]], [["subprocess", "run", "run"]], [["builtins", "open", "open"]],  # not values
    [["builtins", "eval", "ev"]], [["pathlibx", "Path", "Path"]],
    [["pkg", "run", "result"]],  # the test's own name
    [["m", "A", "x"], ["n", "B", "x"]],  # one alias twice
    [["m", "__class__", "c"]], [["m", "A", "__builtins__"]], [["a..b", "A", "A"]], [["m", "A", "class"]],
    [["m", "A"]], "m.A", [["m", "A", "A"]] * 100,
])
def test_imports_are_the_project_s_or_value_types_never_a_test_s_own_name(raw: object) -> None:
    with pytest.raises(literal.NotLiteral):
        literal.Imports.of(raw, PROJECT)


def test_a_dunder_module_of_the_project_is_a_module_like_any() -> None:
    imports = literal.Imports.of([["pkg.__main__", "parse", "parse"]], PROJECT)
    assert imports.project == {"parse"}
    with pytest.raises(literal.NotLiteral):
        literal.Imports.of([["pkg.__main__", "__builtins__", "b"]], PROJECT)  # the name taken stays plain


def test_the_project_s_names_come_from_its_tree() -> None:
    assert literal.project_names(["coder/__init__.py", "src/pkg/a.py", "setup.py", "tests/test_x.py", "README.md",
                                  "lib/x.y/z.py", "docs/conf.py"]) == {"coder", "pkg", "setup", "tests", "lib", "src",
                                                                        "docs"}


def target(what: str = "`n < 0` never true") -> Target:
    return Target("f:0:g0", "pkg/mod.py", 7, what, "pkg.mod", [("size", 5, 5)], "")


def found(check: Check, args: tuple[tuple[str, str, str], ...] = (("items", "pos", "[1, 2]"),)) -> Found:
    return Found("size", args, literal.Imports.of([["pkg.mod", "size", "size"], ["builtins", "ValueError", "ValueError"]],
                                                  PROJECT), check, "2", "3")


def test_a_witness_becomes_a_test_of_the_head_s_answer() -> None:
    code = compose(found(Check("returns", expect="2")), target())
    tree = ast.parse(code)
    assert "from pkg.mod import size" in code and "from builtins" not in code  # builtins need no import
    assert "        items = [1, 2]\n        result = size(items)\n        assert result == 2\n" in code
    assert "for _ in range(3)" in code and [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == \
        ["test_witness_size_line_7"]
    code = compose(found(Check("raises", type="ValueError")), target())
    assert "import pytest" in code and "with pytest.raises(ValueError):\n            size(items)" in code
    code = compose(found(Check("returns", text="<Size 2>"), (("result", "pos", "1"), ("n", "kw", "2"))), target())
    assert "arg_result = 1" in code and "size(arg_result, n=n)" in code and "assert repr(result) == '<Size 2>'" in code
    code = compose(found(Check("returns", expect="None")), target())
    assert "assert result is None" in code
    code = compose(found(Check("argument", expect="'x (DEPRECATED)'", param="items", attr="help")), target())
    assert "        size(items)\n        assert items.help == 'x (DEPRECATED)'\n" in code


def test_a_hostile_description_stays_inside_its_comment() -> None:
    code = compose(found(Check("returns", expect="2")), target('x"""\n__import__("os").system("id")\r\n#'))
    tree = ast.parse(code)
    assert [type(n).__name__ for n in tree.body] == ["ImportFrom", "FunctionDef"]  # nothing ran from the text
    assert code.splitlines()[0].startswith("# reviewui witness for pkg/mod.py:7: x\"\"\" __import__")


def test_a_reply_is_read_with_every_piece_checked() -> None:
    good = {"found": True, "tries": 3, "seconds": 0.1, "witness": {
        "callee": "size", "args": [["items", "pos", "[1]"]], "imports": [["pkg.mod", "size", "size"]],
        "assert": {"kind": "returns", "expect": "1"}, "head": "1\x1b[2J", "reverted": "x" * 5000}}
    a = read_answer(good, PROJECT, target())
    assert a is not None and a.found is not None and a.tries == 3
    assert a.found.head == "1\\x1b[2J" and len(a.found.reverted) == literal.MAX_TEXT  # visible, capped
    bad = {**good, "witness": {**good["witness"], "args": [["items", "pos", "__import__('os')"]]}}
    a = read_answer(bad, PROJECT, target())
    assert a is not None and a.found is None and "refused" in a.why
    for odd in (None, [], "x", {"found": True}, {"found": True, "witness": {"callee": "size"}}):
        a = read_answer(odd, PROJECT, target())
        assert a is None or a.found is None
    wrong_param = {**good, "witness": {**good["witness"], "assert": {"kind": "argument", "param": "other", "expect": "1"}}}
    assert read_answer(wrong_param, PROJECT, target()).found is None  # type: ignore[union-attr]
    outside = {**good, "witness": {**good["witness"], "callee": "PurePosixPath",
                                   "imports": [["pathlib", "PurePosixPath", "PurePosixPath"]]}}
    assert read_answer(outside, PROJECT, target()).found is None  # type: ignore[union-attr]  # not imported
    # the function called is the target's, whatever the run says it called
    evil = {**good, "witness": {**good["witness"], "callee": "__import__('os').system"}}
    assert read_answer(evil, PROJECT, target()).found.callee == "size"  # type: ignore[union-attr]
    method = Target("f:0:g0", "pkg/mod.py", 7, "x", "pkg.mod", [("Opt", 1, 1), ("__init__", 3, 3)], "")
    init = {**good, "witness": {**good["witness"], "imports": [["pkg.mod", "Opt", "Opt"]],
                                "assert": {"kind": "argument", "param": "items", "attr": "help", "expect": "1"}}}
    found = read_answer(init, PROJECT, method).found  # type: ignore[union-attr]
    assert found is not None and found.callee == "Opt.__init__" and found.check.attr == "help"
    for attr in ("__dict__", "a.b", 3):
        bad_attr = {**init, "witness": {**init["witness"], "assert": {**init["witness"]["assert"], "attr": attr}}}
        assert read_answer(bad_attr, PROJECT, method).found is None  # type: ignore[union-attr]
    assert read_answer({"error": "boom\x07", "tries": -4}, PROJECT, target()) == \
        read_answer({"error": "boom\x07"}, PROJECT, target())


def test_the_short_form() -> None:
    assert literal.call_words("next_delay", [("policy", "pos", "Policy(base_delay=0.5, max_delay=2.0, attempts=12)"),
                                             ("attempt", "pos", "3")]) == \
        "next_delay(Policy(base_delay=0.5, max_delay=2.0, attempts=12), 3)"
    long_list = "[" + ", ".join(f"Message(role='user', content='{'x' * 40}')" for _ in range(4)) + "]"
    assert literal.call_words("trim", [("items", "pos", long_list), ("n", "kw", "1")]) == \
        "trim([Message(…), Message(…), Message(…), …], n=1)"


def test_words_and_json() -> None:
    w = Witness(True, "trim([…], 1)", "[1]", "[1, 2]", tries=4, seconds=0.5)
    assert w.words() == "witness: `trim([…], 1)`: head `[1]`, reverted `[1, 2]`; no test checks this case"
    assert w.to_json() == {"found": True, "call": "trim([…], 1)", "head": "[1]", "reverted": "[1, 2]", "tries": 4,
                           "seconds": 0.5, "reason": ""}
    none = Witness(False, tries=57, seconds=2.0)
    assert none.words() == "witness: none found in 57 tries (likely equivalent)" and none.searched
    assert none.to_json()["call"] is None and none.to_json()["head"] is None
    assert not Witness(False, reason="no seed").searched


def test_witness_budget_is_a_trusted_setting(tmp_path: Path) -> None:
    assert Settings().witness_budget == Budget(2.0, 200)
    assert Settings.from_mapping({"witness-budget": {"seconds": 5, "calls": 50}}).witness_budget == Budget(5.0, 50)
    assert Settings.from_mapping({"witness-budget": 1}).witness_budget == Budget(1.0, 200)
    for bad in ({"seconds": 0}, {"calls": 0}, {"calls": True}, {"tries": 3}, "2", -1):
        with pytest.raises(ReviewError):
            Settings.from_mapping({"witness-budget": bad})
    from reviewui.core.config import BRANCH_NEVER, SETTING_KEYS

    assert "witness-budget" in BRANCH_NEVER and "witness-budget" in SETTING_KEYS
