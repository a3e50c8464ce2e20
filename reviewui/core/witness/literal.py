"""The sources a witness is made of: the one grammar they must fit, the test they become, the short form.

Every source comes from a run of the branch's code (the capture plugin, the
search), so none is trusted: each is parsed (bounded: `bounded.parse_python`
caps its size and depth) and accepted only when it is made of literals
(numbers, strings, bytes, None, True, False, lists, tuples, sets, dicts),
names the witness imports (its aliases, and attributes of them), and calls
of those names or of `float`, `complex`, `set`, `frozenset` and `_obj` with
such arguments. No comprehension, lambda, operator (but a minus sign),
subscript, starred or f-string gets through. A test composed of accepted
pieces can only build values and call the function under test: what the
branch's own tests do, in the sandbox where it runs.
"""

from __future__ import annotations

import ast
import keyword
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from reviewui.core.bounded import parse_python
from reviewui.core.safe_text import visible

MAX_SOURCE = 16 * 1024
"""Characters one source may hold."""
MAX_TEXT = 200
"""Characters kept of a text shown to a person (a repr, an outcome)."""
BUILTIN_CALLS = frozenset({"float", "complex", "set", "frozenset", "_obj"})
TEST_NAMES = frozenset({"result", "pytest", "_obj", "float", "complex", "set", "frozenset", "range", "repr", "_"})
"""Names the composed test uses itself: an alias or a parameter never takes one."""
KINDS = ("pos", "var", "kw", "varkw")


class NotLiteral(ValueError):
    """A source that does not fit the grammar."""


def identifier(name: object) -> str:
    """`name` when it is a plain identifier (no keyword, no dunder); raises NotLiteral."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) or name.startswith("__"):
        raise NotLiteral(f"not a plain name: {str(name)[:40]!r}")
    return name


def dotted(name: object) -> str:
    """A dotted module name of plain identifiers; raises NotLiteral."""
    if not isinstance(name, str) or not name:
        raise NotLiteral("not a module name")
    for part in name.split("."):
        identifier(part)
    return name


@dataclass(frozen=True)
class Imports:
    """The names a witness's sources use: (module, attribute, alias) each, validated."""

    items: tuple[tuple[str, str, str], ...]

    @staticmethod
    def of(raw: object) -> Imports:
        """Validated imports from a run's `[[module, attribute, alias]]`; raises NotLiteral."""
        if not isinstance(raw, list) or len(raw) > 64:
            raise NotLiteral("imports: not a short list")
        items: list[tuple[str, str, str]] = []
        seen: set[str] = set()
        for entry in raw:
            if not isinstance(entry, list) or len(entry) != 3:
                raise NotLiteral("imports: an entry is not [module, attribute, alias]")
            module, attr, alias = dotted(entry[0]), identifier(entry[1]), identifier(entry[2])
            if alias in TEST_NAMES or alias in seen:
                raise NotLiteral(f"imports: alias {alias!r} is taken")
            seen.add(alias)
            items.append((module, attr, alias))
        return Imports(tuple(items))

    @property
    def aliases(self) -> frozenset[str]:
        """The names the sources may use."""
        return frozenset(alias for _, _, alias in self.items)

    def lines(self, used: Iterable[str]) -> list[str]:
        """`from m import a as b` for each alias in `used`, in a stable order."""
        wanted = set(used)
        out = []
        for module, attr, alias in sorted(self.items):
            if alias in wanted:
                out.append(f"from {module} import {attr}" + ("" if attr == alias else f" as {alias}"))
        return out


def check(source: object, aliases: frozenset[str]) -> ast.expr:
    """The parsed expression of `source` when it fits the grammar (module docstring); raises NotLiteral."""
    if not isinstance(source, str) or len(source) > MAX_SOURCE or "\n" in source or "\r" in source:
        raise NotLiteral("not a one-line source of bounded size")
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError) as e:
        raise NotLiteral(f"does not parse: {e}") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        raise NotLiteral("not one expression")
    expr = tree.body[0].value
    _Grammar(aliases).visit(expr)
    return expr


class _Grammar:
    def __init__(self, aliases: frozenset[str]) -> None:
        self.aliases = aliases
        self.nodes = 0

    def visit(self, node: ast.expr) -> None:  # noqa: C901 - one branch per accepted form
        self.nodes += 1
        if self.nodes > 4000:
            raise NotLiteral("too many values")
        if isinstance(node, ast.Constant):
            if not isinstance(node.value, (str, bytes, int, float, complex, bool, type(None))):
                raise NotLiteral("an odd constant")
            return
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) \
                and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float, complex):
            return
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            for e in node.elts:
                self.visit(e)
            return
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:
                    raise NotLiteral("a ** in a dict")
                self.visit(k)
                self.visit(v)
            return
        if isinstance(node, (ast.Name, ast.Attribute)):
            self.name(node, calls=False)
            return
        if isinstance(node, ast.Call):
            self.name(node.func, calls=True)
            for a in node.args:
                if isinstance(a, ast.Starred):
                    raise NotLiteral("a starred argument")
                self.visit(a)
            for kw in node.keywords:
                if kw.arg is None:
                    raise NotLiteral("a ** argument")
                identifier(kw.arg)
                self.visit(kw.value)
            return
        raise NotLiteral(f"{type(node).__name__} is not allowed")

    def name(self, node: ast.expr, calls: bool) -> None:
        """A name the witness imports, or an attribute chain from one (or a builtin it may call)."""
        while isinstance(node, ast.Attribute):
            identifier(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            raise NotLiteral("a call of something that is not a name")
        if node.id in self.aliases or (calls and node.id in BUILTIN_CALLS):
            return
        raise NotLiteral(f"{node.id!r} is not imported")


# --- the short form -----------------------------------------------------------------------


def short(source: str, limit: int = 40) -> str:
    """A source shortened for a person: containers and calls past `limit` shown as `[…]`, `Name(…)`."""
    if len(source) <= limit:
        return source
    try:
        expr = ast.parse(source, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return source[: limit - 1] + "…"
    if isinstance(expr, ast.List):
        return "[…]"
    if isinstance(expr, ast.Tuple):
        return "(…)"
    if isinstance(expr, (ast.Set, ast.Dict)):
        return "{…}"
    if isinstance(expr, ast.Call):
        return ast.unparse(expr.func)[:limit] + "(…)"
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (str, bytes)):
        return source[: limit - 2] + "…" + source[0 if isinstance(expr.value, str) else 1]
    return source[: limit - 1] + "…"


def call_words(callee: str, args: Sequence[tuple[str, str, str]], limit: int = 40) -> str:
    """The call as a person reads it: `trim([…], 1)`."""
    parts = []
    for name, kind, source in args:
        s = short(source, limit)
        parts.append({"pos": s, "var": f"*{s}", "kw": f"{name}={s}", "varkw": f"**{s}"}[kind])
    return f"{callee}({', '.join(parts)})"


def said(text: object) -> str:
    """An outcome the run reported, as text a person may be shown (capped, control characters visible)."""
    s = text if isinstance(text, str) else ""
    s = s if len(s) <= MAX_TEXT else s[: MAX_TEXT - 1] + "…"
    return visible(s)


def names_in(exprs: Iterable[ast.expr]) -> set[str]:
    """The root names the expressions use."""
    out: set[str] = set()
    for e in exprs:
        out |= {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}
    return out


def one_line(text: str) -> str:
    """`text` fit for a comment line: no line break, control characters visible."""
    return visible(" ".join(text.split()))


def repr_literal(text: Any) -> str:
    """A Python string literal of `text` (a repr the run reported), capped."""
    return repr(str(text)[:4000])
