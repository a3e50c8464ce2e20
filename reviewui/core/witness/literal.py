"""The sources a witness is made of: the one grammar they must fit, the test they become, the short form.

Every source comes from a run of the branch's code (the capture plugin, the
search), so none is trusted: each is parsed (bounded: `bounded.parse_python`
caps its size and depth) and accepted only when it is made of literals
(numbers, strings, bytes, None, True, False, lists, tuples, sets, dicts),
names the witness imports, and calls with such arguments. The imports
themselves are checked: a name from the project's own modules (the top-level
packages of the head's tree), a value type of a few standard-library modules
(`datetime`, `decimal`, `fractions`, `pathlib`, `uuid`, `ipaddress`; `argparse`
for its `Namespace`), or a
builtin class; nothing from `os`, `subprocess` or the like. A call is of an
imported name, of `float`, `complex`, `set`, `frozenset` or `_obj`, or of an
attribute chain of a project name (a nested class, a method: the project's
code, which any of its tests runs); never of a standard-library name's
attribute (`Path.unlink(...)`). No comprehension, lambda, operator (but a
minus sign), subscript, starred or f-string gets through. A test composed of
accepted pieces only builds values and calls the project's code: what the
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
STDLIB_VALUES = frozenset({"datetime", "decimal", "fractions", "pathlib", "uuid", "ipaddress", "argparse"})
"""Standard-library modules whose value types a witness may build (inside/witness_values.py renders them)."""
SOURCE_ROOTS = ("", "src/", "lib/", "python/")


class NotLiteral(ValueError):
    """A source that does not fit the grammar."""


def identifier(name: object) -> str:
    """`name` when it is a plain identifier (no keyword, no dunder); raises NotLiteral."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) or name.startswith("__"):
        raise NotLiteral(f"not a plain name: {str(name)[:40]!r}")
    return name


def dotted(name: object) -> str:
    """A dotted module name of identifiers (a `__main__` or `__about__` module among them); raises NotLiteral."""
    if not isinstance(name, str) or not name or len(name) > 200:
        raise NotLiteral("not a module name")
    for part in name.split("."):
        if not part.isidentifier() or keyword.iskeyword(part):
            raise NotLiteral(f"not a module name: {name[:40]!r}")
    return name


def project_names(tree: Iterable[str]) -> frozenset[str]:
    """The top-level module names the head's tree makes importable (at its root, `src/`, `lib/`, `python/`)."""
    out: set[str] = set()
    for path in tree:
        for root in SOURCE_ROOTS:
            if path.startswith(root) and path.endswith(".py"):
                top = path[len(root):].split("/", 1)[0].removesuffix(".py")
                if top.isidentifier() and not keyword.iskeyword(top):
                    out.add(top)
    return frozenset(out)


@dataclass(frozen=True)
class Imports:
    """The names a witness's sources use: (module, attribute, alias) each, validated."""

    items: tuple[tuple[str, str, str], ...]
    project: frozenset[str] = frozenset()
    """The aliases of names from the project's own modules (whose attributes a source may call)."""

    @staticmethod
    def of(raw: object, project: frozenset[str]) -> Imports:
        """Validated imports from a run's `[[module, attribute, alias]]`, `project` being the project's
        top-level module names; raises NotLiteral."""
        if not isinstance(raw, (list, tuple)) or len(raw) > 64:
            raise NotLiteral("imports: not a short list")
        items: list[tuple[str, str, str]] = []
        own: set[str] = set()
        seen: set[str] = set()
        for entry in raw:
            if not isinstance(entry, (list, tuple)) or len(entry) != 3:
                raise NotLiteral("imports: an entry is not [module, attribute, alias]")
            module, attr, alias = dotted(entry[0]), identifier(entry[1]), identifier(entry[2])
            if alias in TEST_NAMES or alias in seen:
                raise NotLiteral(f"imports: alias {alias!r} is taken")
            top = module.split(".", 1)[0]
            if top in project:
                own.add(alias)
            elif not (top in STDLIB_VALUES or (module == "builtins" and _builtin_class(attr))):
                raise NotLiteral(f"imports: {attr} from {module} is neither the project's nor a value type")
            seen.add(alias)
            items.append((module, attr, alias))
        return Imports(tuple(items), frozenset(own))

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


def _builtin_class(name: str) -> bool:
    import builtins

    return isinstance(getattr(builtins, name, None), type)


def check(source: object, imports: Imports) -> ast.expr:
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
    _Grammar(imports).visit(expr)
    return expr


class _Grammar:
    def __init__(self, imports: Imports) -> None:
        self.aliases, self.project = imports.aliases, imports.project
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
        """A name the witness imports, or an attribute chain from one (called: only a project name's),
        or a builtin it may call."""
        chain = isinstance(node, ast.Attribute)
        while isinstance(node, ast.Attribute):
            identifier(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            raise NotLiteral("a call of something that is not a name")
        if calls and chain and node.id not in self.project:
            raise NotLiteral(f"a call of an attribute of {node.id!r}, not the project's")
        if node.id in self.aliases or (calls and not chain and node.id in BUILTIN_CALLS):
            return
        raise NotLiteral(f"{node.id!r} is not imported")


# --- the short form -----------------------------------------------------------------------


def short(source: str, limit: int = 60) -> str:
    """A source shortened for a person: long strings cut, containers and calls opened only as deep as
    `limit` allows (`[Message(…), …]`, `Policy(base_delay=0.5, max_delay=2.0)`)."""
    if len(source) <= limit:
        return source
    try:
        expr = ast.parse(source, mode="eval").body
        for depth in (3, 2, 1, 0):
            text = _shorten(expr, depth)
            if len(text) <= limit:
                return text
    except (SyntaxError, ValueError, RecursionError):
        text = source
    return text[: limit - 1] + "…"


def _shorten(node: ast.expr, depth: int) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and len(node.value) > 12:
        text = repr(node.value[:10])
        return text[:-1] + "…" + text[-1]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        shape = {ast.List: "[]", ast.Tuple: "()", ast.Set: "{}"}[type(node)]
        if depth <= 0 and node.elts:
            return shape[0] + "…" + shape[1]
        items = [_shorten(e, depth - 1) for e in node.elts[:3]] + (["…"] if len(node.elts) > 3 else [])
        return shape[0] + ", ".join(items) + ("," if shape == "()" and len(items) == 1 else "") + shape[1]
    if isinstance(node, ast.Dict):
        if depth <= 0 and node.keys:
            return "{…}"
        pairs = [f"{_shorten(k, depth - 1) if k is not None else '**'}: {_shorten(v, depth - 1)}"
                 for k, v in list(zip(node.keys, node.values, strict=True))[:3]]
        return "{" + ", ".join(pairs + (["…"] if len(node.keys) > 3 else [])) + "}"
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func)
        if depth <= 0 and (node.args or node.keywords):
            return f"{name}(…)"
        parts = [_shorten(a, depth - 1) for a in node.args]
        parts += [f"{k.arg}={_shorten(k.value, depth - 1)}" for k in node.keywords]
        return f"{name}({', '.join(parts)})"
    return ast.unparse(node)


def call_words(callee: str, args: Sequence[tuple[str, str, str]], limit: int = 60) -> str:
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
