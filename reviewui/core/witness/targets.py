"""What a witness is looked for in: the function around a toothless guard or hunk, its reverted code, hints.

A witness is a call of the enclosing function, so only a guard or hunk inside
a module-level function or a method of a module-level class has one to look
for (the guard batch's rule, `guard_batch.def_path`: a nested def or lambda
would keep the old code). A hunk qualifies when all its lines sit in one such
function and that function keeps its `def` line when the hunk is reverted.
The hints are the names and constants of the reverted code (the guard's
condition, the hunk's lines): the search varies the seeds there first.
"""

from __future__ import annotations

import ast
import io
import keyword
import tokenize
from dataclasses import dataclass, field
from typing import Any, Callable

from reviewui.core.bite.guard_batch import _def_path_in
from reviewui.core.bite.guard_check import DefPath
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.guards import Guard
from reviewui.core.bite.origin import ChangedModule
from reviewui.core.bite.report import HunkResult
from reviewui.core.bounded import parse_python_or_none
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk
from reviewui.core.revert import RevertError, raw_hunk_for, revert_bytes

MAX_NAMES, MAX_CONSTANTS, MAX_CONSTANT_TEXT = 32, 16, 64


@dataclass(frozen=True)
class Target:
    """One toothless guard or hunk to find a witness for."""

    ident: str
    """Unique within a sweep: `<file>:<hunk>` for a hunk, plus `:g<n>` for its n-th guard."""
    file: str
    """The changed file."""
    line: int
    """The guard's line (a hunk's first added line)."""
    what: str
    """What was reverted, in words (the guard's description, or the hunk's header)."""
    module: str
    """The module's import name."""
    path: DefPath
    """(name, first line, def line) from the module down to the function."""
    source: str
    """The whole file with the guard or hunk reverted."""
    hints: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    """{"names": [...], "constants": [...]} of the reverted code."""
    typed: bool = False
    """True when every parameter but `self`/`cls` has a type hint (Hypothesis can draw them)."""

    @property
    def def_line(self) -> int:
        """The function's `def` line at the head (its seeds' key)."""
        return self.path[-1][2]

    @property
    def function(self) -> str:
        """The function's name."""
        return self.path[-1][0]


def functions(source: str | None, lines: list[int]) -> list[DefPath]:
    """The distinct functions (def paths) enclosing any of `lines` of `source`."""
    tree = parse_python_or_none(source)
    if tree is None:
        return []
    found: dict[tuple[object, ...], DefPath] = {}
    for line in lines:
        path = _def_path_in(tree, line)
        if path is not None and path[-1][0] and _is_function(tree, path):
            found.setdefault(tuple(path), path)
    return list(found.values())


def for_guard(ident: str, g: GuardResult | Guard, source: str, head_text: str | None,
              module: ChangedModule) -> Target | None:
    """The target of a toothless guard (`source`: its file with the guard reverted), or None."""
    tree = parse_python_or_none(head_text)
    path = _def_path_in(tree, g.line) if tree is not None else None
    if tree is None or head_text is None or path is None or not _is_function(tree, path):
        return None
    segment = _segment(head_text, g.start, g.end)
    return Target(ident, g.file, g.line, g.description, module.name, path, source, hints(segment),
                  _typed(tree, path))


def for_hunk(ident: str, f: FileDiff, h: Hunk, head_raw: bytes | None, module: ChangedModule) -> Target | None:
    """The target of a toothless hunk inside one function, or None."""
    added = [ln.new_no for ln in h.lines if ln.kind == "added" and ln.new_no is not None]
    if head_raw is None or not added:
        return None
    try:
        head_text = head_raw.decode("utf-8")
        reverted = revert_bytes(head_raw, raw_hunk_for(f, h)).decode("utf-8")
    except (UnicodeDecodeError, RevertError):
        return None
    tree, back = parse_python_or_none(head_text), parse_python_or_none(reverted)
    paths = functions(head_text, added) if tree is not None else []
    if len(paths) != 1 or back is None or tree is None:
        return None
    [path] = paths
    if any(not (path[-1][1] <= n <= _end(tree, path)) for n in added) or _def_path_in(back, path[-1][2]) != path:
        return None  # past the function, or the revert moves its def: no one code object to swap
    changed = "\n".join(ln.text for ln in h.lines if ln.kind in ("added", "removed"))
    return Target(ident, f.path, added[0], f"hunk {h.header}", module.name, path, reverted, hints(changed),
                  _typed(tree, path))


def toothless_targets(r: HunkResult, f: FileDiff | None, h: Hunk | None, read: Callable[[str], bytes | None],
                      guards: dict[tuple[str, int, str], Guard], module: ChangedModule | None) -> list[Target]:
    """The targets of one hunk result: its toothless guards (and itself, when toothless inside a function)."""
    if module is None:
        return []
    raw = read(r.file)
    try:
        text = raw.decode("utf-8") if raw is not None else None
    except UnicodeDecodeError:
        return []
    out: list[Target] = []
    for n, g in enumerate(r.guards):
        if g.verdict != "toothless":
            continue
        edit = guards.get(guard_key(g))
        t = for_guard(f"{r.file}:{r.index}:g{n}", g, edit.source, text, module) if edit is not None else None
        if t is not None:
            out.append(t)
    if r.verdict == "toothless" and f is not None and h is not None:
        t = for_hunk(f"{r.file}:{r.index}", f, h, raw, module)
        if t is not None:
            out.append(t)
    return out


def guard_key(g: Guard | GuardResult) -> tuple[str, int, str]:
    """How a graded guard finds its edit: file, line, kind, where it starts and what it puts there."""
    return (g.file, g.line, f"{g.kind}:{g.start}:{g.replacement}")


def hints(text: str) -> dict[str, Any]:
    """The names and short constants of a piece of code (the places a witness is most likely found)."""
    names: list[str] = []
    constants: list[Any] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME:
                if tok.string in ("True", "False", "None"):
                    value = {"True": True, "False": False, "None": None}[tok.string]
                    if value not in constants:
                        constants.append(value)
                elif not keyword.iskeyword(tok.string) and tok.string not in names:
                    names.append(tok.string)
            elif tok.type in (tokenize.NUMBER, tokenize.STRING) and len(tok.string) <= MAX_CONSTANT_TEXT + 2:
                try:
                    value = ast.literal_eval(tok.string)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(value, (int, float, str)) and not isinstance(value, complex) and value not in constants:
                    constants.append(value)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return {"names": names[:MAX_NAMES], "constants": [c for c in constants if _json_safe(c)][:MAX_CONSTANTS]}


def _json_safe(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, str)) or (isinstance(v, float) and v == v and abs(v) != float("inf"))



def _node(tree: ast.Module, path: DefPath) -> ast.AST | None:
    body: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for name, _, line in path:
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == name and n.lineno == line), None)
        if node is None:
            return None
        body = node.body
    return node


def _is_function(tree: ast.Module, path: DefPath) -> bool:
    return isinstance(_node(tree, path), (ast.FunctionDef, ast.AsyncFunctionDef))


def _end(tree: ast.Module, path: DefPath) -> int:
    node = _node(tree, path)
    return getattr(node, "end_lineno", 0) or 0


def _typed(tree: ast.Module, path: DefPath) -> bool:
    node = _node(tree, path)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    a = node.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    if len(path) > 1 and params and params[0].arg in ("self", "cls"):
        params = params[1:]
    return bool(params) and all(p.annotation is not None for p in params)


def _segment(text: str, start: tuple[int, int], end: tuple[int, int]) -> str:
    """The head's code between two 1-based (line, column) places."""
    lines = text.splitlines()
    (l1, c1), (l2, c2) = start, end
    if not (1 <= l1 <= l2 <= len(lines)):
        return ""
    if l1 == l2:
        return lines[l1 - 1][c1 - 1:c2 - 1]
    return "\n".join([lines[l1 - 1][c1 - 1:], *lines[l1:l2 - 1], lines[l2 - 1][:c2 - 1]])
