"""Cross-hunk dependencies, by `ast`: what a single-hunk revert takes away that other hunks use.

Reverting one hunk can fail tests only because another hunk of the same
branch needs what it added: a function, an imported name, a parameter, a
class attribute. Such a failure says nothing about whether the tests check
behaviour, so it is `broken`, not `bites`. Instead of guessing from the
hunk's text, the module is parsed before (branch head) and after the revert,
and the difference is exact: names defined or imported anywhere in the
module (multi-line `from x import (` blocks included), and parameters of
each function (by qualified name).
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from typing import Mapping

from reviewui.core.bounded import parse_python
from reviewui.core.diff import Diff
from reviewui.core.hunks import Hunk


@dataclass(frozen=True)
class Removed:
    """What the revert took away from the module."""

    names: frozenset[str]
    """Names defined or imported at head that the reverted module no longer defines."""
    params: frozenset[str]
    """Parameter names a function had at head and no longer has."""
    functions: frozenset[str]
    """Short names of functions whose parameter lists the revert changed."""

    @property
    def all(self) -> frozenset[str]:
        """Every name a failure may be about."""
        return self.names | self.params | self.functions


def removed_by_revert(head: str, reverted: str) -> Removed | None:
    """Compare the module at head and after the revert; None when either does not parse."""
    before, after = _facts(head), _facts(reverted)
    if before is None or after is None:
        return None
    names = before[0] - after[0]
    params: set[str] = set()
    functions: set[str] = set()
    for qual, ps in before[1].items():
        now = after[1].get(qual)
        if now is not None and now != ps:
            params |= set(ps) - set(now)
            functions.add(qual.rsplit(".", 1)[-1])
    return Removed(frozenset(names), frozenset(params), frozenset(functions))


@functools.lru_cache(maxsize=8)
def _facts(text: str) -> tuple[frozenset[str], Mapping[str, tuple[str, ...]]] | None:
    """The names `text` defines or imports, and each function's parameters (cached: every revert of
    a file compares against the same head)."""
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    sigs: dict[str, tuple[str, ...]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(child.name)
                qual = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    a = child.args
                    sigs[qual] = tuple(x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs,
                                                       *([a.vararg] if a.vararg else []),
                                                       *([a.kwarg] if a.kwarg else [])])
                visit(child, qual + ".")
                continue
            if isinstance(child, ast.Import):
                for al in child.names:
                    names.add(al.asname or al.name.split(".")[0])
                    names.update(al.name.split("."))
            elif isinstance(child, ast.ImportFrom):
                for al in child.names:
                    names.add(al.asname or al.name)
            elif isinstance(child, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            names.add(n.id)
                        elif isinstance(n, ast.Attribute):
                            names.add(n.attr)
            visit(child, prefix)

    visit(tree, "")
    return frozenset(names), sigs


def needed_by_revert(head: str, reverted: str) -> frozenset[str]:
    """Names the reverted module uses that it does not define and head did not use.

    Reverting one half of a rename (a use site) brings back the old name,
    which the other half of the branch removed: a NameError about it is not
    evidence about the tests. Builtins never count. Empty when either side
    does not parse.
    """
    before, after = _uses(head), _uses(reverted)
    if before is None or after is None:
        return frozenset()
    import builtins

    # By scope (another function's own `args` is no help); what head's module bound is the revert's own doing.
    unbound = after.unbound - before.unbound - before.module
    return frozenset(after.loads - before.loads - after.bound - set(dir(builtins))) | unbound


@dataclass(frozen=True)
class _Uses:
    """What needed_by_revert compares of one side."""

    loads: frozenset[str]
    """Every name read anywhere."""
    bound: frozenset[str]
    """Every name bound anywhere (assigned, defined, a parameter, imported, an exception's)."""
    unbound: frozenset[str]
    module: frozenset[str]
    """_unbound's two sets."""


@functools.lru_cache(maxsize=8)
def _uses(source: str) -> _Uses | None:
    """needed_by_revert's facts about one side, None when it does not parse (cached: every revert of a
    file compares against the same head)."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return None
    loads: set[str] = set()
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else out).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((al.asname or al.name).split(".")[0] for al in n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
    unbound, module = _unbound(source, tree)
    return _Uses(frozenset(loads), frozenset(out), unbound, module)


def _unbound(source: str, tree: ast.Module) -> tuple[frozenset[str], frozenset[str]]:
    """Names some scope of `source` (`tree`, parsed within the caps) reads that no scope that encloses
    it, the module or the builtins binds (a NameError when that code runs; none with a star import),
    and the names the module binds."""
    import builtins
    import symtable

    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(tree)):
        return frozenset(), frozenset()
    try:
        top = symtable.symtable(source, "<module>", "exec")
    except (SyntaxError, ValueError):
        return frozenset(), frozenset()
    tables = [top]
    for t in tables:
        tables.extend(t.get_children())
    module = {sym.get_name() for t in tables for sym in t.get_symbols()
              if (t is top and (sym.is_assigned() or sym.is_imported() or sym.is_namespace()))
              or (sym.is_declared_global() and sym.is_assigned())}
    # A read the module resolves: any at module level, and a function's read bound in no enclosing function.
    wanted = {sym.get_name() for t in tables for sym in t.get_symbols()
              if sym.is_referenced() and (t is top or sym.is_global())}
    unbound = frozenset(n for n in wanted - module - set(dir(builtins)) if not n.startswith("__"))  # __file__ &c.
    return unbound, frozenset(module)


_UNEXPECTED_KW = re.compile(r"unexpected keyword argument '(\w+)'")
_POSITIONAL = re.compile(r"(\w+)\(\) (?:takes|missing) ")


def type_error_name(message: str) -> str | None:
    """The argument (or function) a TypeError about a call signature names, else None."""
    if m := _UNEXPECTED_KW.search(message):
        return m.group(1)
    if m := _POSITIONAL.search(message):
        return m.group(1)
    return None


# A one-line string literal that is not an f-string: a name inside it (`_m = "assertNotRegex"`, a message)
# is text, not a use; an f-string's braces are code, and a subscript's key (`config["KEY"]`) reads a key.
_STRING = re.compile(r"""(?<![\w'"\[])(?![fF])(?:[rRbBuU]{0,2})('|")(?:\\.|(?!\1).)*\1""")


def user_of(name: str, diff: Diff, skip: Hunk) -> str | None:
    """`file:line` of the first added line of another code hunk of the branch that mentions `name`.

    Test hunks do not count (a test using what the hunk adds is checking it), nor
    do files that are not code (docs, config).
    """
    from reviewui.core.bite.selection import is_not_code

    word = re.compile(rf"(?<![\w.]){re.escape(name)}\b|\.{re.escape(name)}\b")
    # `x.name = ...`, `name: T = ...`, `def name`: another hunk defining its own `name` is not a use of ours.
    own = re.compile(rf"^\s*(?:[\w.]*\.)?{re.escape(name)}\s*(?::[^=]*)?=(?!=)|^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b")
    for f in diff.files:
        if f.role == "test" or f.binary or is_not_code(f.path):
            continue
        for h in f.hunks:
            if h.key == skip.key:
                continue
            for ln in h.lines:
                code = _STRING.sub('""', ln.text).split("#", 1)[0]
                if ln.kind == "added" and ln.new_no is not None and word.search(code) and not own.search(code):
                    return f"{f.path}:{ln.new_no}"
    return None
