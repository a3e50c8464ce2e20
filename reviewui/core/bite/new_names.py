"""The names a branch adds or renames, and whether a failure on the base is only one of them missing.

"Fails on the base only because a name is missing" is true of a test that
cannot even import or collect there because it imports something the branch
adds (a new function, a renamed class, a new module). Any other failure, an
AttributeError or ImportError raised by the code under test included, is the
behaviour the test checks: in real fixes that exception is often the bug.

Read through git with the analysis caps (core/bounded.py); nothing is run.
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Iterable

from reviewui.core.bounded import parse_python
from reviewui.core.git import show_file

if TYPE_CHECKING:
    from reviewui.core.diff import Diff
    from reviewui.core.run.junit import TestOutcome
    from reviewui.core.target import Target

_IMPORT_TEXT = re.compile(r"\b(?:ImportError|ModuleNotFoundError)\b|cannot import name|No module named|"
                          r"ImportError while importing")
_NAMES = (
    re.compile(r"cannot import name '([\w.]+)'"),
    re.compile(r"No module named '([\w.]+)'"),
    re.compile(r"has no attribute '(\w+)'"),
    re.compile(r"name '(\w+)' is not defined"),
)


def added_names(target: Target, diff: Diff) -> frozenset[str]:
    """Names the branch adds or renames in its source: definitions, assignments and imports (module
    and class level) its changed Python files have at the head and not at the base, and the dotted
    names of the modules it adds or renames (`pkg.ops` and `ops`)."""
    out: set[str] = set()
    for f in diff.files:
        if f.role != "source" or not f.path.endswith(".py") or f.status == "deleted" or f.binary:
            continue
        if f.status in ("added", "renamed"):
            out |= _module_names(f.path)
        head = _names_in(show_file(target.repo_dir, target.head, f.path))
        base = _names_in(show_file(target.repo_dir, target.base, f.old_path or f.path)) if f.status != "added" else set()
        out |= head - base
    return frozenset(out)


def only_a_new_name_missing(t: TestOutcome, collection: bool, names: Iterable[str]) -> bool:
    """True when failure `t` happened while importing or collecting (`collection`: it is its module's
    collection error) and the name it misses is one the branch adds or renames (`names`)."""
    text = f"{t.message}\n{t.detail}"
    importing = collection or t.collection or "::" not in t.id or t.exception in ("ImportError", "ModuleNotFoundError") \
        or bool(_IMPORT_TEXT.search(t.message))
    if not importing:
        return False
    known = frozenset(names)
    # The name the error says is missing, exactly: a module by its dotted name, anything else bare.
    return any(m.group(1) in known for pattern in _NAMES for m in pattern.finditer(text))


def _module_names(path: str) -> set[str]:
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return {".".join(parts[i:]) for i in range(len(parts))}


def _names_in(blob: bytes | None) -> set[str]:
    """Module- and class-level names defined in a file's bytes (empty when absent or not parsed)."""
    if blob is None:
        return set()
    try:
        tree = parse_python(blob)
    except (SyntaxError, ValueError):
        return set()
    out: set[str] = set()
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(node.name)
        elif isinstance(node, ast.ClassDef):
            out.add(node.name)
            stack.extend(node.body)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
        elif isinstance(node, (ast.If, ast.Try)):  # `try: import x / except ImportError`, `if TYPE_CHECKING:`
            stack.extend([*node.body, *node.orelse, *getattr(node, "finalbody", []),
                          *(s for h in getattr(node, "handlers", []) for s in h.body)])
    return out
