"""What a Python test file is made of, as far as "is the test tree additive?" cares.

For every function and class in a test file: whether pytest would collect
it as a test, its checks (asserts, raises/warns blocks, assert* calls), the
skip/xfail marks on it and in its body, and its parametrize cases. Each item
is kept as normalized source (`ast.unparse`), so reformatting is not a
change but editing an expected value is.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Iterator

from reviewui.core.fixtures.source import call_name, walk_toplevel  # noqa: F401 - one copy, shared with fixtures

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_RAISES = frozenset(
    "raises warns deprecated_call assertRaises assertRaisesRegex assertRaisesRegexp assertWarns "
    "assertWarnsRegex assertLogs assertNoLogs".split()
)
_SKIP_CALLS = frozenset({"skip", "xfail", "skipTest", "importorskip"})
_SKIP_MARK = re.compile(r"(^|\.)(skip\w*|xfail|expectedFailure)$")


@dataclass(frozen=True)
class Item:
    """One check, mark or case, as normalized text plus where it is."""

    text: str
    """Normalized source (`ast.unparse`)."""
    line: int
    """First line in its file."""
    end_line: int
    """Last line in its file."""


@dataclass
class Def:
    """One function or class of a test file."""

    qual: str
    """Qualified name: `test_x`, `TestA.test_y`."""
    node: ast.AST
    """The FunctionDef, AsyncFunctionDef or ClassDef."""
    kind: str
    """`function` or `class`."""
    is_test: bool
    """True when pytest would collect it (test function, test class, test method)."""
    checks: list[Item] = field(default_factory=list)
    """Checks in its body (functions only)."""
    skips: list[Item] = field(default_factory=list)
    """skip/xfail decorators and skip/xfail calls in its body."""
    params: dict[str, list[Item]] = field(default_factory=dict)
    """parametrize argnames -> cases."""

    @property
    def line(self) -> int:
        """Line of the `def`/`class`."""
        return getattr(self.node, "lineno", 1)

    @property
    def shape(self) -> str:
        """The definition without its name: equal shapes mean a rename."""
        node = self.node
        if isinstance(node, ast.ClassDef):
            return "|".join(ast.dump(s) for s in node.body)
        if isinstance(node, _FUNCS):
            return ast.dump(node.args) + "|" + "|".join(ast.dump(s) for s in node.body)
        return ""


@dataclass
class TestFile:
    """The test anatomy of one parsed file."""

    __test__ = False  # not a pytest class

    defs: dict[str, Def]
    """Every function and class by qualified name (first definition wins)."""
    module_skips: list[Item]
    """Module-level `pytestmark` skip/xfail marks and `pytest.skip(...)` calls."""


def unparse(node: ast.AST) -> str:
    """Return normalized source of `node` ("" when it cannot be unparsed)."""
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError, AttributeError):
        return ""


def item(node: ast.AST, text: str | None = None) -> Item:
    """Return an Item for `node` (its own unparse unless `text` is given)."""
    line = getattr(node, "lineno", 1)
    return Item(unparse(node) if text is None else text, line, getattr(node, "end_lineno", None) or line)


def is_skip_mark(expr: ast.AST) -> bool:
    """True for skip/skipif/xfail marks and unittest.skip*/expectedFailure decorators."""
    return bool(_SKIP_MARK.search(call_name(expr)))


def _is_test_class(node: ast.ClassDef) -> bool:
    if node.name.startswith("Test"):
        return True
    return any(call_name(b).endswith("TestCase") for b in node.bases)


def analyze_test_file(tree: ast.Module) -> TestFile:
    """Return the test anatomy of a parsed file."""
    constants = _module_literals(tree)
    defs: dict[str, Def] = {}
    _collect(tree.body, "", None, defs, constants)
    module_skips: list[Item] = []
    for stmt in walk_toplevel(tree.body):
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets):
            marks = stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
            module_skips += [item(m) for m in marks if is_skip_mark(m)]
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            if call_name(stmt.value).rsplit(".", 1)[-1] in _SKIP_CALLS:
                module_skips.append(item(stmt.value))
    return TestFile(defs, module_skips)


def _collect(
    body: list[ast.stmt], prefix: str, cls: ast.ClassDef | None, defs: dict[str, Def], constants: dict[str, ast.expr]
) -> None:
    in_test_class = cls is not None and _is_test_class(cls)
    for stmt in walk_toplevel(body):
        if isinstance(stmt, _FUNCS):
            qual = prefix + stmt.name
            is_test = stmt.name.startswith("test") and (cls is None or in_test_class)
            d = Def(qual, stmt, "function", is_test)
            d.checks = list(checks_in(stmt))
            d.skips = [item(dec) for dec in stmt.decorator_list if is_skip_mark(dec)]
            d.skips += [item(c) for c in _calls_in(stmt) if call_name(c).rsplit(".", 1)[-1] in _SKIP_CALLS]
            d.params = _params(stmt.decorator_list, constants)
            defs.setdefault(qual, d)
        elif isinstance(stmt, ast.ClassDef):
            qual = prefix + stmt.name
            d = Def(qual, stmt, "class", _is_test_class(stmt))
            d.skips = [item(dec) for dec in stmt.decorator_list if is_skip_mark(dec)]
            for s in walk_toplevel(stmt.body):
                if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in s.targets):
                    marks = s.value.elts if isinstance(s.value, (ast.List, ast.Tuple)) else [s.value]
                    d.skips += [item(m) for m in marks if is_skip_mark(m)]
            d.params = _params(stmt.decorator_list, constants)
            defs.setdefault(qual, d)
            _collect(stmt.body, qual + ".", stmt, defs, constants)


def checks_in(func: ast.AST) -> Iterator[Item]:
    """Yield the checks in a function: asserts, raises/warns blocks, assert*/fail calls.

    An assert's message is not part of the check: rewording it loosens nothing.
    """
    # A stack popped from the end, children pushed reversed: source order, no recursion limit.
    stack: list[ast.AST] = list(reversed(getattr(func, "body", [])))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Assert):
            yield item(node, "assert " + unparse(node.test))
            continue  # calls inside an assert belong to it
        if isinstance(node, (ast.With, ast.AsyncWith)):
            later: list[ast.AST] = []
            for w in node.items:
                ctx = w.context_expr
                if isinstance(ctx, ast.Call) and call_name(ctx).rsplit(".", 1)[-1] in _RAISES:
                    yield item(ctx, "with " + unparse(ctx))
                    later += [*ctx.args, *(k.value for k in ctx.keywords)]
                else:
                    later.append(ctx)
            later += node.body
            stack.extend(reversed(later))
            continue
        if isinstance(node, ast.Call):
            name = call_name(node)
            last = name.rsplit(".", 1)[-1]
            if last.startswith("assert") or last in _RAISES or name in ("pytest.fail", "self.fail"):
                yield item(node)
                continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _calls_in(func: ast.AST) -> Iterator[ast.Call]:
    for stmt in getattr(func, "body", []):
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                yield node


def _module_literals(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level `NAME = [..]` / `(..)` literals, so `parametrize("x", CASES)` can be read."""
    out: dict[str, ast.expr] = {}
    for stmt in walk_toplevel(tree.body):
        value: ast.expr | None = None
        names: list[str] = []
        if isinstance(stmt, ast.Assign):
            value = stmt.value
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            value, names = stmt.value, [stmt.target.id]
        if isinstance(value, (ast.List, ast.Tuple)):
            for n in names:
                out[n] = value
    return out


def _params(decorators: list[ast.expr], constants: dict[str, ast.expr]) -> dict[str, list[Item]]:
    out: dict[str, list[Item]] = {}
    for dec in decorators:
        if not (isinstance(dec, ast.Call) and call_name(dec).rsplit(".", 1)[-1] == "parametrize"):
            continue
        names = dec.args[0] if dec.args else next((k.value for k in dec.keywords if k.arg == "argnames"), None)
        values = dec.args[1] if len(dec.args) > 1 else next((k.value for k in dec.keywords if k.arg == "argvalues"), None)
        if names is None or values is None:
            continue
        key = _argnames(names)
        if isinstance(values, ast.Name) and values.id in constants:
            values = constants[values.id]
        if isinstance(values, (ast.List, ast.Tuple)):
            cases = [item(e) for e in values.elts]
        else:
            cases = [item(values)]
        out.setdefault(key, []).extend(cases)
    return out


def _argnames(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return ",".join(p.strip() for p in node.value.split(","))
    if isinstance(node, (ast.List, ast.Tuple)):
        return ",".join(
            e.value.strip() if isinstance(e, ast.Constant) and isinstance(e.value, str) else unparse(e) for e in node.elts
        )
    return unparse(node)
