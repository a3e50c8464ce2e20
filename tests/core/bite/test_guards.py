"""Guard generation from the ast: kinds, the agent's lines only, arid code, valid edits only."""

from __future__ import annotations

import ast

import pytest

from reviewui.core.bite.guard_source import SourceText
from reviewui.core.bite.guards import GUARD_KINDS, generate

SRC = '''import logging

log = logging.getLogger(__name__)


def old(x):
    y = x + 1
    if y > 10:
        return 10
    return y


def pick(flag, other, n):
    """Pick one."""
    log.info("picking %s", n)
    if flag and other:
        return "both"
    for i in range(n):
        if i >= 3:
            n -= 1; break
    total = n * 2
    print(total)
    return total


class Thing:
    def __repr__(self):
        if self.x > 1:
            return "big"
        return "small"
'''


def lines_of(text: str, start: str, end: str) -> range:
    rows = text.splitlines()
    a = next(i for i, r in enumerate(rows) if r.startswith(start)) + 1
    b = next(i for i, r in enumerate(rows) if r.startswith(end)) + 1
    return range(a, b + 1)


def kinds_by_line(guards) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for g in guards:
        out.setdefault(g.line, []).append(g.kind)
    return out


def test_every_kind_on_a_new_function_and_line_count_kept() -> None:
    gs = generate(SRC, lines_of(SRC, "def pick", "    return total"), file="m.py")
    by = kinds_by_line(gs)
    assert by[16] == ["condition", "operand", "operand"]   # if flag and other: never true, each operand
    assert 17 not in by   # `return "both"` is all that branch does: the same edit as `never true`
    assert by[18] == ["statement"]                                        # the for loop
    assert by[19] == ["condition", "condition", "boundary"]             # if i >= 3
    assert by[20] == ["early-exit", "statement"]                         # n -= 1; break
    assert by[13] == ["body"]
    assert {g.kind for g in gs} == set(GUARD_KINDS)
    for g in gs:
        assert g.source.count("\n") == SRC.count("\n")
        ast.parse(g.source)
    boundary = next(g for g in gs if g.kind == "boundary")
    assert boundary.replacement == "(i > 3)" and "(i > 3):" in boundary.source.splitlines()[18]
    operand = [g.replacement for g in gs if g.kind == "operand"]
    assert operand == ["other", "flag"]
    body = next(g for g in gs if g.kind == "body")
    assert body.source.splitlines()[14] == "    return None" and '"""Pick one."""' in body.source


def test_arid_lines_get_no_guards() -> None:
    gs = generate(SRC, lines_of(SRC, "def pick", "    return total"), file="m.py")
    by = kinds_by_line(gs)
    assert 14 not in by   # docstring
    assert 15 not in by   # log.info(...)
    assert 22 not in by   # print(total)
    assert 21 not in by   # `total = ...`: removing it only unbinds a name used below
    assert by[23] == ["statement"]  # `return total` is not an equivalent `return None`: removable
    arid = generate(SRC, lines_of(SRC, "class Thing", '        return "small"'), file="m.py")
    assert arid == []     # __repr__ is arid as a whole
    assert generate("import logging\nlogging.warning('x')\n", [2]) == []
    assert generate("def f(x: int) -> None:\n    y: int\n    pass\n", [1, 2, 3]) == []
    reraise = "def f():\n    try:\n        g()\n    except ValueError as e:\n        raise\n"
    assert [g.line for g in generate(reraise, [5])] == []
    assert generate("import typing\nif typing.TYPE_CHECKING:\n    import os\nif __name__ == '__main__':\n    main()\n",
                    [2, 3, 4, 5]) == []


def test_trailing_return_none_is_equivalent_and_skipped() -> None:
    src = "def f(xs):\n    xs.append(1)\n    return None\n"
    gs = generate(src, [1, 2, 3])
    assert [(g.line, g.kind) for g in gs] == [(1, "body"), (2, "statement")]


def test_untouched_lines_of_a_changed_function_get_none() -> None:
    # The agent added only the `if y > 10: return 10` lines of old(): the def, `y = ...`
    # and `return y` are base lines, so: no body guard, no statement guard on them.
    gs = generate(SRC, [8, 9], file="m.py")
    assert sorted({g.line for g in gs}) == [8]
    assert {g.kind for g in gs} == {"condition", "boundary"}
    assert generate(SRC, [], file="m.py") == []


def test_a_revert_that_leaves_invalid_code_is_never_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    # Removing the multi-line call would leave `; z = 3` at the start of a line.
    src = "def f(log):\n    log.append(1,\n               2); z = 3\n    return z\n"
    text = SourceText(src)
    stmt = ast.parse(src).body[0].body[0]  # type: ignore[attr-defined]
    start, end = text.span(stmt)
    with pytest.raises(SyntaxError):
        compile(text.splice(start, end, "pass", expression=False), "f.py", "exec")
    gs = generate(src, [1, 2, 3, 4])
    assert [(g.line, g.kind) for g in gs] == [(1, "body"), (4, "statement")]
    for g in gs:
        compile(g.source, "f.py", "exec")
    # It is the compile check that drops it: without the check the invalid edit would be offered.
    import reviewui.core.bite.guards as guards_mod

    monkeypatch.setattr(guards_mod, "_compiles", lambda source, file: True)
    assert (2, "statement") in [(g.line, g.kind) for g in generate(src, [1, 2, 3, 4])]


def test_multiline_conditions_and_unicode_columns() -> None:
    src = 'def f(a, b):\n    if (a <= "é" and\n            b):\n        return 1\n    return 2\n'
    gs = generate(src, [2, 3])
    operands = [g for g in gs if g.kind == "operand"]
    assert [g.line for g in operands] == [2, 3]
    for g in gs:
        assert g.source.count("\n") == src.count("\n")
        compile(g.source, "f.py", "exec")
    boundary = next(g for g in gs if g.kind == "boundary")
    assert 'a < "é"' in boundary.source


def test_unparseable_or_empty_input_gives_no_guards() -> None:
    assert generate("def f(:\n", [1]) == []
    assert generate("", [1]) == []
    assert generate("x = 1\n", [99]) == []


def test_none_and_bool_equality_is_no_boundary() -> None:
    gs = generate("def f(x):\n    if x == None:\n        return 1\n    return 2\n", [2])
    assert "boundary" not in {g.kind for g in gs}


def test_only_the_given_lines_of_an_added_function() -> None:
    # Just the def line given: the body guard, and no statement guards on lines not given.
    gs = generate(SRC, [13], file="m.py")
    assert [(g.line, g.kind) for g in gs] == [(13, "body")]


def test_backslash_continued_condition_keeps_valid_operand_drops() -> None:
    src = "def f(a, b):\n    if a and \\\n            b:\n        return 1\n    return 2\n"
    gs = generate(src, [2, 3])
    operands = [(g.line, g.replacement) for g in gs if g.kind == "operand"]
    assert operands == [(2, "b"), (3, "a")]
    for g in (g for g in gs if g.kind == "operand"):
        assert g.source.count("\n") == src.count("\n")
        compile(g.source, "f.py", "exec")


def test_subsumed_and_equivalent_edits_are_not_offered() -> None:
    # `a and b` always true is subsumed by dropping each operand; `or` never true likewise.
    and_ways = [g.replacement for g in generate("def f(a, b):\n    if a and b:\n        g()\n", [2])
                if g.kind == "condition"]
    or_ways = [g.replacement for g in generate("def f(a, b):\n    if a or b:\n        g()\n", [2])
               if g.kind == "condition"]
    assert and_ways == ["False"] and or_ways == ["True"]
    # `==` as a whole guarded condition: its negation adds nothing to always/never; `<` still gets `<=`.
    eq = generate("def f(a):\n    if a == 3:\n        g()\n    h()\n", [2])
    assert "boundary" not in {g.kind for g in eq}
    # a statement that is all an `if` without `else` does equals `never true`; with an else it does not
    alone = generate("def f(a):\n    if a > 1:\n        g()\n    return 1\n", [1, 2, 3, 4])
    assert (3, "statement") not in [(g.line, g.kind) for g in alone]
    both = generate("def f(a):\n    if a > 1:\n        g()\n    else:\n        h()\n    return 1\n", [1, 2, 3, 4, 5, 6])
    assert {(3, "statement"), (5, "statement")} <= {(g.line, g.kind) for g in both}
    # `total = 0` before `total += x`: removing it only raises UnboundLocalError
    aug = generate("def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n", [1, 2, 3, 4, 5])
    assert (2, "statement") not in [(g.line, g.kind) for g in aug]
