"""Is a changed check strictly stronger than the one it replaced? (`tests-not-additive` says `info` then.)

Editing an existing check is how a suite is made green without making the code
right, so a changed check is an error; unless what the check demands can only
have grown. Three shapes are recognised, each by syntax alone:

- an added conjunct: `assert a` → `assert a and b` (every old condition kept);
- `==` replacing a weaker comparison of the same left side: `assert n > 0` →
  `assert n == 2` (checked on literals: 2 > 0), `assert x >= y` → `assert x == y`,
  `assert r` / `assert r is not None` → `assert r == [1]`;
- the old check kept as a parametrize row: `assert f(1) == 3` →
  `@parametrize("x,want", [(1, 3), (2, 5)])` with `assert f(x) == want`.

unittest's `assertEqual`, `assertTrue`, `assertGreater`… are read as the
comparisons they make. Anything else is not called stricter.
"""

from __future__ import annotations

import ast
from collections import Counter
from typing import Mapping, Sequence

from reviewui.core.findings.pyast import Item, unparse

_UNITTEST = {
    "assertEqual": ast.Eq, "assertEquals": ast.Eq, "assertNotEqual": ast.NotEq, "assertGreater": ast.Gt,
    "assertGreaterEqual": ast.GtE, "assertLess": ast.Lt, "assertLessEqual": ast.LtE, "assertIn": ast.In,
    "assertNotIn": ast.NotIn, "assertIs": ast.Is, "assertIsNot": ast.IsNot,
}
_WEAKER_THAN_EQ = (ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.IsNot)
_IMPLIED_BY_EQ = (ast.LtE, ast.GtE)  # `x == y` implies `x <= y` and `x >= y` whatever y is
_OPS = {ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.In: "in", ast.NotIn: "not in",
        ast.IsNot: "is not"}


def stricter(before: Item, after: Item, params: Mapping[str, Sequence[Item]] | None = None) -> str | None:
    """Why check `after` demands everything `before` did and more (None: not shown to be stricter).

    `params` are the new test's parametrize cases by argnames (`"x,want"`)."""
    old, new = _conditions(before.text), _conditions(after.text)
    if old is None or new is None:
        return None
    row = _kept_as_row(before.text, after.text, params or {})
    if row is not None:
        return f"the old check is kept as the parametrize row {row}"
    old_texts, new_texts = Counter(unparse(c) for c in old), Counter(unparse(c) for c in new)
    if not old_texts - new_texts and sum(new_texts.values()) > sum(old_texts.values()):
        return "it keeps every old condition and adds one"
    gone = list((old_texts - new_texts).elements())
    fresh = list((new_texts - old_texts).elements())
    if len(gone) == 1 and len(fresh) == 1:
        why = _eq_replaces_weaker(_expr(gone[0]), _expr(fresh[0]))
        if why:
            return why
    return None


def _conditions(text: str) -> list[ast.expr] | None:
    """The conditions a check demands, its conjuncts split (None: not a check read here)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    expr: ast.expr | None = None
    if isinstance(stmt, ast.Assert):
        expr = stmt.test
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        expr = _unittest_condition(stmt.value)
    if expr is None:
        return None
    out: list[ast.expr] = []
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, ast.BoolOp) and isinstance(e.op, ast.And):
            stack.extend(reversed(e.values))
        else:
            out.append(e)
    return out


def _unittest_condition(call: ast.Call) -> ast.expr | None:
    """`self.assertEqual(a, b)` as `a == b`, `assertTrue(x)` as `x`, … (None for anything else)."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    args = call.args
    if name in _UNITTEST and len(args) >= 2:
        return ast.Compare(left=args[0], ops=[_UNITTEST[name]()], comparators=[args[1]])
    if name in ("assertTrue", "assert_") and args:
        return args[0]
    if name == "assertIsNotNone" and args:
        return ast.Compare(left=args[0], ops=[ast.IsNot()], comparators=[ast.Constant(None)])
    return None


def _expr(text: str) -> ast.expr | None:
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _eq_replaces_weaker(old: ast.expr | None, new: ast.expr | None) -> str | None:
    """Why `new` (`L == V`) implies `old` (`L op R`, or `L` / `L is not None`) with the same `L`."""
    if old is None or not (isinstance(new, ast.Compare) and len(new.ops) == 1 and isinstance(new.ops[0], ast.Eq)):
        return None
    sides = ((new.left, new.comparators[0]), (new.comparators[0], new.left))
    if not isinstance(old, ast.Compare):  # a bare truth test: `L` → `L == V` with V a truthy literal
        for left, value in sides:
            if unparse(left) == unparse(old) and _literal(value, truthy=True):
                return f"`==` a true value replaces the truth test of {unparse(old)}"
        return None
    if len(old.ops) != 1 or not isinstance(old.ops[0], _WEAKER_THAN_EQ):
        return None
    op, right = old.ops[0], old.comparators[0]
    for left, value in sides:
        if unparse(left) != unparse(old.left):
            continue
        if isinstance(op, _IMPLIED_BY_EQ) and unparse(value) == unparse(right):
            return f"`==` replaces `{_OPS[type(op)]}` of the same two sides"
        if _holds(value, op, right):
            return f"`== {unparse(value)}` replaces `{_OPS[type(op)]} {unparse(right)}`, which it implies"
    return None


def _literal(node: ast.expr, truthy: bool = False) -> bool:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False
    return bool(value) if truthy else True


def _holds(value: ast.expr, op: ast.cmpop, right: ast.expr) -> bool:
    """True when `value op right` holds, both literals (evaluated as Python would, never code)."""
    import operator

    compare = {ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
               ast.GtE: operator.ge, ast.In: lambda a, b: operator.contains(b, a),
               ast.NotIn: lambda a, b: not operator.contains(b, a), ast.IsNot: operator.is_not}.get(type(op))
    if compare is None:
        return False
    try:
        return bool(compare(ast.literal_eval(value), ast.literal_eval(right)))
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False


def _kept_as_row(before: str, after: str, params: Mapping[str, Sequence[Item]]) -> str | None:
    """The parametrize row that turns check `after` back into `before` exactly, if there is one."""
    try:
        template = ast.parse(after)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for argnames, cases in params.items():
        names = [n.strip() for n in argnames.split(",") if n.strip()]
        for case in cases:
            values = _row_values(case.text, len(names))
            if values is None:
                continue
            filled = _Substitute(dict(zip(names, values, strict=True))).visit(ast.parse(unparse(template)))
            if unparse(filled) == before:
                return case.text
    return None


def _row_values(text: str, width: int) -> list[ast.expr] | None:
    """A parametrize case's values, one per argname (`pytest.param(...)`'s own arguments)."""
    node = _expr(text)
    if isinstance(node, ast.Call) and unparse(node.func).rsplit(".", 1)[-1] == "param":
        values: list[ast.expr] = list(node.args)
    elif width == 1 and node is not None:
        values = [node]
    elif isinstance(node, (ast.Tuple, ast.List)):
        values = list(node.elts)
    else:
        return None
    return values if len(values) == width else None


class _Substitute(ast.NodeTransformer):
    """Replace each parameter's name with its row's value."""

    def __init__(self, values: dict[str, ast.expr]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self.values.get(node.id, node)
