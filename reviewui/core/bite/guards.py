"""Guard reverts: tiny source edits inside the lines an agent wrote.

Reverting a whole hunk that adds a function only removes a name: every test
fails on import and the verdict is `broken`. A guard revert breaks one thing
the agent wrote and leaves the rest in place, so a test has to notice that
one thing. From the `ast` of the branch-side file, restricted to the lines a
hunk added or changed:

- `condition`: an `if`/`elif`/`while`/`assert`/ternary/comprehension `if`
  test replaced by `True` (always taken) and by `False` (never taken);
  `while` only never (always would only loop), `assert` only always (the
  check dropped); an `and` chain only never and an `or` chain only always
  (the other way is subsumed by dropping each operand);
- `operand`: each operand of an `and`/`or` chain in such a condition dropped;
- `boundary`: `<`↔`<=`, `>`↔`>=`, `==`↔`!=` (`==`/`!=` not against
  None/True/False, where `is` is meant, nor when the comparison is a guarded
  condition or operand: negating it adds nothing to their guards);
- `early-exit`: a `return`/`raise`/`continue`/`break` inside a branch
  removed (not when it is all an `if` without `else` does: that is the
  condition's `never true`);
- `statement`: in a function the agent added, each statement of its body
  removed one at a time (at most one per line), unless that only unbinds a
  name used later (a guaranteed NameError teaches nothing), is the
  equivalent trailing `return None`, or sits in an `if` branch whose
  condition has guards and it is all that branch does (the same edit);
- `body`: the added function's body replaced by its fall-through, once —
  does any test call it at all?

Arid code gets no guards: logging and `print`, docstrings, annotations,
`__repr__`/`__str__`, pure re-raises, `pass`, `if TYPE_CHECKING`,
`if __name__ == "__main__"`. Every edit keeps the file's line count (so line
numbers in failures still match the diff) and is compiled before it is
offered: an edit that leaves invalid code is dropped, never run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterable, Iterator, Literal

from reviewui.core.bounded import parse_python
from reviewui.core.bite.guard_source import (
    SourceText,
    arid_test,
    bound_names,
    as_operand,
    is_arid,
    is_docstring,
    is_reraise,
    own_nodes,
    snippet,
)
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk

GuardKind = Literal["condition", "operand", "boundary", "early-exit", "statement", "body"]
GUARD_KINDS: tuple[GuardKind, ...] = ("condition", "operand", "boundary", "early-exit", "statement", "body")
"""Every guard kind, in the order guards of one line are listed (the registry: add a kind here first)."""

ARID_FUNCTIONS = frozenset({"__repr__", "__str__"})
_SWAP: dict[type[ast.cmpop], tuple[type[ast.cmpop], str, str]] = {
    ast.Lt: (ast.LtE, "<", "<="), ast.LtE: (ast.Lt, "<=", "<"),
    ast.Gt: (ast.GtE, ">", ">="), ast.GtE: (ast.Gt, ">=", ">"),
    ast.Eq: (ast.NotEq, "==", "!="), ast.NotEq: (ast.Eq, "!=", "=="),
}
_OP_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
            ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


@dataclass(frozen=True)
class Guard:
    """One guard revert: an edit of one file at one line the agent wrote."""

    file: str
    """Repository-relative path of the file."""
    hunk: int
    """0-based index of the hunk whose added lines hold the guard."""
    line: int
    """1-based line number in the branch's file."""
    kind: GuardKind
    """condition | operand | boundary | early-exit | statement | body."""
    description: str
    """What the edit does, in a few words (code in backticks)."""
    source: str
    """The whole file with the edit applied (same number of lines)."""
    start: tuple[int, int]
    """(line, column) where the edited code starts; both 1-based, column in characters."""
    end: tuple[int, int]
    """(line, column) just past the edited code."""
    replacement: str
    """What replaces the code between `start` and `end`."""
    cover_lines: tuple[int, ...]
    """Lines whose execution by a test means the test reaches the edit."""
    names: frozenset[str] = frozenset()
    """Names the edit unbinds: a failure only about them is `broken`, as for hunks."""

    @property
    def ident(self) -> str:
        """A key unique within the hunk: `line:kind:column` plus the replacement."""
        return f"{self.line}:{self.kind}:{self.start[1]}:{self.replacement}"


def guards_for_hunk(filediff: FileDiff, hunk: Hunk, source: str | None) -> list[Guard]:
    """The guard reverts of `hunk` given the branch-side text of its file (none for non-Python)."""
    if source is None or not filediff.path.endswith(".py") or filediff.status == "deleted":
        return []
    lines = frozenset(ln.new_no for ln in hunk.lines if ln.kind == "added" and ln.new_no is not None)
    return generate(source, lines, file=filediff.path, hunk=hunk.index)


def generate(source: str, lines: Iterable[int], *, file: str = "", hunk: int = 0) -> list[Guard]:
    """Every valid guard revert of `source` on `lines` (branch-side line numbers), in line order."""
    wanted = frozenset(lines)
    if not wanted:
        return []
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):  # NotAnalysed (over the caps) is a ValueError
        return []
    text = SourceText(source)
    gen = _Generator(tree, text, wanted, file, hunk)
    out: list[Guard] = []
    seen: set[str] = set()
    for g in gen.run():
        if g.source == source or g.ident in seen or not _compiles(g.source, file):
            continue
        seen.add(g.ident)
        out.append(g)
    order = {k: n for n, k in enumerate(GUARD_KINDS)}
    out.sort(key=lambda g: (g.line, order[g.kind], g.start))
    return out


def _compiles(source: str, file: str) -> bool:
    try:
        compile(source, file or "<guard>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


class _Generator:
    def __init__(self, tree: ast.Module, text: SourceText, wanted: frozenset[int], file: str, hunk: int) -> None:
        self.tree, self.text, self.wanted, self.file, self.hunk = tree, text, wanted, file, hunk
        self.parent: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
        self.arid_nodes: set[ast.AST] = set()
        self.guarded_parts: set[ast.AST] = set()
        """Condition tests on the agent's lines and the operands of their and/or chains."""
        for node in ast.walk(tree):
            tests = [node.test] if isinstance(node, (ast.If, ast.While, ast.IfExp)) else \
                list(node.ifs) if isinstance(node, ast.comprehension) else []
            for test in tests:
                if test.lineno in wanted:
                    self.guarded_parts.add(test)
                for sub in ast.walk(test):
                    if isinstance(sub, ast.BoolOp):
                        self.guarded_parts |= {v for v in sub.values if v.lineno in wanted}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in ARID_FUNCTIONS:
                self.arid_nodes |= set(ast.walk(node))
            elif isinstance(node, ast.If) and (
                arid_test(node.test) or all(is_arid(s) for s in [*node.body, *node.orelse])
            ):
                self.arid_nodes |= set(ast.walk(node.test))  # `if DEBUG: log(...)`: no behaviour to guard

    # --- helpers ----------------------------------------------------------

    def mine(self, line: int) -> bool:
        return line in self.wanted

    def stmt_of(self, node: ast.AST) -> ast.stmt | None:
        current: ast.AST | None = node
        while current is not None and not isinstance(current, ast.stmt):
            current = self.parent.get(current)
        return current

    def cover(self, node: ast.stmt | ast.expr) -> tuple[int, ...]:
        stmt = self.stmt_of(node)
        lines = set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        if stmt is not None:
            lines.add(stmt.lineno)
        return tuple(sorted(lines))

    def guard(self, node: ast.stmt | ast.expr, line: int, kind: GuardKind, description: str, new: str,
              names: frozenset[str] = frozenset(), cover: tuple[int, ...] | None = None,
              span: tuple[tuple[int, int], tuple[int, int]] | None = None) -> Guard:
        start, end = span or self.text.span(node)
        return Guard(
            file=self.file, hunk=self.hunk, line=line, kind=kind, description=description,
            source=self.text.splice(start, end, new, expression=isinstance(node, ast.expr)),
            start=(start[0], start[1] + 1), end=(end[0], end[1] + 1), replacement=new,
            cover_lines=cover if cover is not None else self.cover(node), names=names,
        )

    # --- the kinds --------------------------------------------------------

    def run(self) -> Iterator[Guard]:
        early: set[ast.stmt] = set()
        for node in ast.walk(self.tree):
            if node in self.arid_nodes:
                continue
            if isinstance(node, (ast.If, ast.While, ast.Assert, ast.IfExp)):
                yield from self.conditions(node, node.test)
            elif isinstance(node, ast.comprehension):
                for test in node.ifs:
                    yield from self.conditions(node, test)
            elif isinstance(node, ast.Compare):
                yield from self.boundaries(node)
            elif isinstance(node, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
                g = self.early_exit(node)
                if g is not None:
                    early.add(node)
                    yield g
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node not in self.arid_nodes \
                    and self.mine(node.lineno):
                yield from self.statements(node, early)
                body = self.body(node)
                if body is not None:
                    yield body

    def conditions(self, owner: ast.AST, test: ast.expr) -> Iterator[Guard]:
        if isinstance(test, ast.Constant) or test in self.arid_nodes:
            return
        seg = snippet(self.text.segment(test))
        if self.mine(test.lineno):
            ways: tuple[bool, ...] = (True, False)
            # `a and b` always true is subsumed by dropping each operand (`or`: never true), as in
            # the sufficient logical-connector mutants; the operand guards below carry it.
            if isinstance(test, ast.BoolOp):
                ways = (False,) if isinstance(test.op, ast.And) else (True,)
            if isinstance(owner, ast.While):
                ways = (False,)
            elif isinstance(owner, ast.Assert):
                ways = (True,)
            for way in ways:
                what = "always true" if way else "never true"
                if isinstance(owner, ast.Assert):
                    what = "dropped (the assert always passes)"
                yield self.guard(test, test.lineno, "condition", f"condition `{seg}` {what}", str(way))
        for node in ast.walk(test):
            if isinstance(node, ast.BoolOp):
                yield from self.operands(node)

    def operands(self, node: ast.BoolOp) -> Iterator[Guard]:
        op = " and " if isinstance(node.op, ast.And) else " or "
        for i, value in enumerate(node.values):
            if not self.mine(value.lineno):
                continue
            rest = [as_operand(v, self.text.segment(v)) for j, v in enumerate(node.values) if j != i]
            new = rest[0] if len(rest) == 1 else "(" + op.join(rest) + ")"
            seg = snippet(self.text.segment(value))
            yield self.guard(node, value.lineno, "operand", f"`{seg}` dropped from the condition", new,
                             cover=self.cover(value))

    def boundaries(self, node: ast.Compare) -> Iterator[Guard]:
        if not self.mine(node.lineno):
            return
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            swap = _SWAP.get(type(op))
            if swap is None:
                continue
            left, right = operands[i], operands[i + 1]
            if isinstance(op, (ast.Eq, ast.NotEq)) and (any(
                isinstance(x, ast.Constant) and (x.value is None or isinstance(x.value, bool)) for x in (left, right)
            ) or node in self.guarded_parts):
                continue  # `is` meant; or negating a guarded condition/operand, which its guards already cover
            parts = [as_operand(operands[0], self.text.segment(operands[0]))]
            for j, o in enumerate(node.ops):
                sym = swap[2] if j == i else _OP_TEXT.get(type(o), "?")
                parts += [sym, as_operand(operands[j + 1], self.text.segment(operands[j + 1]))]
            new = "(" + " ".join(parts) + ")"
            seg = snippet(f"{self.text.segment(left)} {swap[1]} {self.text.segment(right)}")
            yield self.guard(node, node.lineno, "boundary", f"`{swap[1]}` turned into `{swap[2]}` in `{seg}`", new)

    def early_exit(self, node: ast.stmt) -> Guard | None:
        if not self.mine(node.lineno):
            return None
        parent = self.parent.get(node)
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module, ast.ClassDef)):
            return None  # not inside a branch: the function's own last word is a `statement` guard
        handlers = frozenset(h.name for h in self._handlers(node) if h.name)
        if is_reraise(node, handlers):
            return None
        if self.all_the_branch_does(node):
            return None  # removing the only thing the branch does is the condition's `never true`
        seg = snippet(self.text.segment(node))
        return self.guard(node, node.lineno, "early-exit", f"early exit `{seg}` removed", "pass")

    def all_the_branch_does(self, stmt: ast.stmt) -> bool:
        """True when `stmt` is all an `if` without `else` does and that condition has guards:
        removing it equals the condition's `never true`."""
        parent = self.parent.get(stmt)
        return isinstance(parent, ast.If) and parent.test in self.guarded_parts \
            and parent.test not in self.arid_nodes and not isinstance(parent.test, ast.Constant) \
            and not parent.orelse and [s for s in parent.body if not is_arid(s)] == [stmt]

    def _handlers(self, node: ast.AST) -> Iterator[ast.ExceptHandler]:
        p = self.parent.get(node)
        while p is not None:
            if isinstance(p, ast.ExceptHandler):
                yield p
            p = self.parent.get(p)

    def statements(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, early: set[ast.stmt]) -> Iterator[Guard]:
        own = list(own_nodes(fn))
        params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
        body = fn.body[1:] if fn.body and is_docstring(fn.body[0]) else fn.body
        last = body[-1] if body else None
        used_lines: set[int] = set()
        stmts = sorted((n for n in own if isinstance(n, ast.stmt)), key=lambda s: (s.lineno, s.col_offset))
        for stmt in stmts:
            if not self.mine(stmt.lineno) or stmt.lineno in used_lines or stmt in early:
                continue
            if isinstance(stmt, (ast.If, ast.While, ast.Assert, ast.Global, ast.Nonlocal)):
                continue  # their conditions carry the guards; global/nonlocal do nothing alone
            if self.all_the_branch_does(stmt):
                continue  # the condition's `never true` is the same edit
            if is_arid(stmt, frozenset(h.name for h in self._handlers(stmt) if h.name)) or is_docstring(stmt):
                continue
            if stmt is last and isinstance(stmt, ast.Return) and (
                stmt.value is None or (isinstance(stmt.value, ast.Constant) and stmt.value.value is None)
            ):
                continue  # removing a trailing `return None` changes nothing
            inside = set(ast.walk(stmt))
            bound = bound_names(stmt) if not isinstance(stmt, ast.AugAssign) else set()
            # `x += 1` reads x before it binds it: a load, not a fresh binding.
            aug = {n.target for n in own if isinstance(n, ast.AugAssign)}
            loads = {n.id for n in own if isinstance(n, ast.Name) and n not in inside
                     and (isinstance(n.ctx, ast.Load) or n in aug)}
            stores: set[str] = set(params)
            for n in own:
                if n not in inside and n is not stmt:
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n not in aug:
                        stores.add(n.id)
            if any(name in loads and name not in stores for name in bound):
                continue  # only an UnboundLocalError later: no test needed to notice that
            used_lines.add(stmt.lineno)
            seg = snippet(self.text.segment(stmt).splitlines()[0] if "\n" in self.text.segment(stmt)
                           else self.text.segment(stmt))
            yield self.guard(stmt, stmt.lineno, "statement", f"statement `{seg}` removed", "pass",
                             names=frozenset(bound), cover=(stmt.lineno,))

    def body(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Guard | None:
        body = fn.body[1:] if fn.body and is_docstring(fn.body[0]) else fn.body
        if not body:
            return None
        if all(is_arid(s) for s in body) or (len(body) == 1 and (
            isinstance(body[0], ast.Return)
            and (body[0].value is None or (isinstance(body[0].value, ast.Constant) and body[0].value.value is None))
        )):
            return None
        generator = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(fn))
        (l1, c1), _ = self.text.span(body[0])
        _, end = self.text.span(body[-1])
        indent = " " * c1
        new = f"return\n{indent}yield" if generator else "return None"
        word = "return" if generator else "return None"
        return self.guard(fn, fn.lineno, "body", f"body of `{fn.name}()` replaced by `{word}` (does any test call it?)",
                          new, cover=(body[0].lineno,), span=((l1, c1), end))
