"""Source-level helpers for guard reverts: line-preserving splices and what counts as arid.

Split from guards.py so the generator reads as the list of guard kinds.
"""

from __future__ import annotations

import ast
import re
from typing import Iterator

_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "fatal"})
_LINE_END = re.compile(r"\r\n|\r|\n")
SNIPPET = 60


class SourceText:
    """The source split into lines, with splicing that keeps the line count."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines: list[str] = []
        pos = 0
        for m in _LINE_END.finditer(source):
            self.lines.append(source[pos : m.end()])
            pos = m.end()
        if pos < len(source) or not self.lines:
            self.lines.append(source[pos:])

    def col(self, lineno: int, byte_col: int) -> int:
        """ast's UTF-8 byte offset on `lineno` as a character offset."""
        line = self.lines[lineno - 1]
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def span(self, node: ast.stmt | ast.expr) -> tuple[tuple[int, int], tuple[int, int]]:
        """((line, col), (end_line, end_col)) of `node`, 0-based character columns."""
        ln, el = node.lineno, node.end_lineno or node.lineno
        return (ln, self.col(ln, node.col_offset)), (el, self.col(el, node.end_col_offset or 0))

    def segment(self, node: ast.stmt | ast.expr) -> str:
        """The source text of `node`."""
        (l1, c1), (l2, c2) = self.span(node)
        if l1 == l2:
            return self.lines[l1 - 1][c1:c2]
        parts = [self.lines[l1 - 1][c1:], *self.lines[l1 : l2 - 1], self.lines[l2 - 1][:c2]]
        return "".join(parts)

    def splice(self, start: tuple[int, int], end: tuple[int, int], new: str, expression: bool = True) -> str:
        """The source with [start, end) replaced by `new`, padded with newlines to keep the line count.

        A multi-line expression is replaced inside parentheses, so the padding
        newlines cannot end a statement early.
        """
        (l1, c1), (l2, c2) = start, end
        pad = max(0, (l2 - l1) - new.count("\n"))
        if pad and expression:
            new = "(" + new + "\n" * pad + ")"
            pad = 0
        head = "".join(self.lines[: l1 - 1]) + self.lines[l1 - 1][:c1]
        tail = self.lines[l2 - 1][c2:] + "".join(self.lines[l2:])
        return head + new + "\n" * pad + tail


_ATOMS = (ast.Name, ast.Attribute, ast.Constant, ast.Call, ast.Subscript, ast.List, ast.Tuple, ast.Dict, ast.Set)


def as_operand(node: ast.expr, text: str) -> str:
    """`text` (the source of `node`) as an operand that may stand anywhere: atoms bare, the rest in parens."""
    return text if isinstance(node, _ATOMS) and "\n" not in text else f"({text})"


def snippet(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= SNIPPET else one[: SNIPPET - 1] + "…"


def is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def is_logging(call: ast.expr) -> bool:
    if not isinstance(call, ast.Call):
        return False
    fn = call.func
    if isinstance(fn, ast.Name):
        return fn.id == "print"
    if isinstance(fn, ast.Attribute):
        owner = fn.value
        name = owner.id if isinstance(owner, ast.Name) else owner.attr if isinstance(owner, ast.Attribute) else ""
        if name == "warnings" and fn.attr == "warn":
            return True
        return fn.attr in _LOG_METHODS and ("log" in name.lower() or name == "logging")
    return False


def is_reraise(stmt: ast.stmt, handler_names: frozenset[str]) -> bool:
    if not isinstance(stmt, ast.Raise) or stmt.cause is not None:
        return False
    return stmt.exc is None or (isinstance(stmt.exc, ast.Name) and stmt.exc.id in handler_names)


def is_arid(stmt: ast.stmt, handler_names: frozenset[str] = frozenset()) -> bool:
    """Statements no test is expected to check: logging, docstrings, annotations, pass, re-raises."""
    if isinstance(stmt, ast.Pass) or is_reraise(stmt, handler_names):
        return True
    if isinstance(stmt, ast.Expr) and (isinstance(stmt.value, ast.Constant) or is_logging(stmt.value)):
        return True
    return isinstance(stmt, ast.AnnAssign) and stmt.value is None


def arid_test(test: ast.expr) -> bool:
    """`if TYPE_CHECKING:` and `if __name__ == "__main__":` are not behaviour."""
    if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
        return True
    if isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING":
        return True
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__")


def bound_names(node: ast.AST) -> set[str]:
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names}
    return out


def own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function, not descending into nested functions or classes."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
