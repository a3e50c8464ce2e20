"""`duplicate-function`: a function the branch adds that the repository already has.

Bodies are compared as normalized syntax trees: local variable and
parameter names, and literal values, are abstracted away (so a copy with
renamed variables is still a copy), while the names a body reaches out to
(globals, attributes, keyword arguments) and its operators are kept. Two
bodies are duplicates when both their whole token sequences and the
sequences of outside names they use are at least SIMILARITY_THRESHOLD alike
(difflib ratio), so two functions of the same shape that call different
APIs are not copies. Bodies of fewer than MIN_TOKENS tokens are too small to
call near-copies; an exact copy (same normalized tokens, outside names
included) counts from MIN_TOKENS_EXACT, about a two-statement function, since
re-implementing a short existing check under a new name is the very shape
this rule is for.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Iterable, Iterator

from reviewui.core.findings.model import Finding, finding
from reviewui.core.findings.source import TreeSource
from reviewui.core.roles import DEFAULT_TEST_GLOBS, is_test_path

if TYPE_CHECKING:
    from reviewui.core.fixtures.model import ChangedSymbol

SIMILARITY_THRESHOLD = 0.9
"""Ratio of matching normalized AST tokens at or above which two bodies are duplicates."""
MIN_TOKENS = 25
"""Bodies shorter than this (about a three-line function) are not reported as near-copies."""
MIN_TOKENS_EXACT = 12
"""Bodies shorter than this are never reported, even when identical (`return x` is everywhere)."""

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Existing:
    """A function already in the repository, normalized."""

    name: str
    """Qualified name within its file (`Class.method`)."""
    file: str
    """Repository-relative path."""
    line: int
    """Line of its `def`."""
    tokens: tuple[str, ...]
    """Normalized token sequence of its body."""
    signature: str
    """Its `def` line, for evidence."""


def normalize(func: ast.AST) -> tuple[str, ...]:
    """Return the normalized token sequence of a function's parameters and body (docstring dropped)."""
    local = _local_names(func)
    body = list(getattr(func, "body", []))
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    tokens: list[str] = []
    args = getattr(func, "args", None)
    roots: list[ast.AST] = ([args] if args is not None else []) + body
    stack: list[ast.AST] = list(reversed(roots))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.expr_context):
            continue  # Load/Store on every name would only pad the sequences
        tokens.append(_token(node, local))
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return tuple(tokens)


def _token(node: ast.AST, local: set[str]) -> str:
    if isinstance(node, ast.Name):
        return "V" if node.id in local else f"N:{node.id}"
    if isinstance(node, ast.arg):
        return "arg"
    if isinstance(node, ast.Attribute):
        return f"A:{node.attr}"
    if isinstance(node, ast.Constant):
        return f"C:{type(node.value).__name__}"
    if isinstance(node, ast.keyword):
        return f"K:{node.arg}"
    return type(node).__name__


def _local_names(func: ast.AST) -> set[str]:
    names: set[str] = set()
    args = getattr(func, "args", None)
    if isinstance(args, ast.arguments):
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if a is not None:
                names.add(a.arg)
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (*_FUNCS, ast.ClassDef)) and node is not func:
            names.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def existing_functions(source: TreeSource, exclude: set[tuple[str, int]], test_globs: tuple[str, ...]) -> list[Existing]:
    """Return every source (non-test) function at head except those at (file, line) in `exclude`."""
    out: list[Existing] = []
    for path, tree in source.trees().items():
        if is_test_path(path, test_globs):
            continue
        text = source.text(path) or ""
        lines = text.splitlines()
        for qual, node in _functions(tree.body, ""):
            if (path, node.lineno) in exclude:
                continue
            tokens = normalize(node)
            if len(tokens) < MIN_TOKENS_EXACT:
                continue
            sig = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else f"def {node.name}"
            out.append(Existing(qual, path, node.lineno, tokens, sig))
    return out


def _functions(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for stmt in body:
        if isinstance(stmt, _FUNCS):
            yield prefix + stmt.name, stmt
            yield from _functions(stmt.body, prefix + stmt.name + ".")
        elif isinstance(stmt, ast.ClassDef):
            yield from _functions(stmt.body, prefix + stmt.name + ".")
        elif isinstance(stmt, (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.While)):
            for field in ("body", "orelse", "finalbody"):
                yield from _functions(getattr(stmt, field, []) or [], prefix)
            for h in getattr(stmt, "handlers", []) or []:
                yield from _functions(h.body, prefix)


def similarity(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """Return the difflib ratio of two token sequences (1.0 = identical)."""
    if a == b:
        return 1.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def duplicate_function(
    symbols: Iterable[ChangedSymbol], source: TreeSource, test_globs: Iterable[str] = DEFAULT_TEST_GLOBS
) -> list[Finding]:
    """Return a finding for each added source function (nearly) the same as an existing one."""
    globs = tuple(test_globs)
    added = [
        s for s in symbols
        if s.status == "added" and s.kind in ("function", "method")
        and isinstance(s.node, _FUNCS) and not is_test_path(s.file, globs)
    ]
    candidates = [(s, normalize(s.node)) for s in added]
    candidates = [(s, t) for s, t in candidates if len(t) >= MIN_TOKENS_EXACT]
    if not candidates:
        return []
    exclude = {(s.file, s.line) for s in symbols if s.status == "added"}
    pool = existing_functions(source, exclude, globs)
    out: list[Finding] = []
    for sym, tokens in candidates:
        best: tuple[float, Existing] | None = None
        for ex in pool:
            score = _score(tokens, ex.tokens, best[0] if best else SIMILARITY_THRESHOLD)
            if score is not None and (best is None or score > best[0]):
                best = (score, ex)
                if score == 1.0:
                    break
        if best is None:
            continue
        score, ex = best
        how = "the same as" if score == 1.0 else f"{round(score * 100)}% the same as"
        text = source.text(sym.file) or ""
        lines = text.splitlines()
        sig = lines[sym.line - 1].strip() if 0 < sym.line <= len(lines) else f"def {sym.name}"
        out.append(
            finding(
                "duplicate-function",
                f"{sym.name} is {how} existing {ex.name} ({ex.file}:{ex.line}) "
                f"(normalized AST, threshold {round(SIMILARITY_THRESHOLD * 100)}%)",
                file=sym.file,
                line=sym.line,
                symbol=sym.name,
                evidence=f"+ {sym.file}:{sym.line}: {sig}\n= {ex.file}:{ex.line}: {ex.signature}",
            )
        )
    return out


def _score(a: tuple[str, ...], b: tuple[str, ...], floor: float) -> float | None:
    """The similarity of a and b when it is at least `floor`, else None.

    The lower of the whole-sequence ratio and the outside-names ratio, so a
    body that keeps the shape but calls other things does not count.
    """
    if a == b:
        return 1.0
    if min(len(a), len(b)) < MIN_TOKENS:
        return None  # short bodies count only when identical
    whole = _ratio(a, b, floor)
    if whole is None:
        return None
    names = _ratio(_names(a), _names(b), floor)
    return None if names is None else min(whole, names)


def _names(tokens: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(t for t in tokens if t[:2] in ("N:", "A:", "K:"))


def _ratio(a: tuple[str, ...], b: tuple[str, ...], floor: float) -> float | None:
    """difflib ratio of a and b when at least `floor` (cheap upper bounds first), else None."""
    if a == b:
        return 1.0
    la, lb = len(a), len(b)
    if 2 * min(la, lb) / (la + lb) < floor:
        return None
    m = SequenceMatcher(None, a, b, autojunk=False)
    if m.real_quick_ratio() < floor or m.quick_ratio() < floor:
        return None
    r = m.ratio()
    return r if r >= floor else None
