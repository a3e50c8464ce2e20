"""Failure reports made as pytest makes them, each source file parsed once per fork, not once per failure
(copied into a run as `reviewui_reports`; see README.md here).

pytest's long report of a failing test finds the statement around each line
of its traceback by parsing the whole source file (`getstatementrange_ast`,
called from `_pytest._code.code` and from `Source.getstatement`) and walking
every statement of it (`get_statement_startend2`), once per failing test: for a revert that fails 40 tests of a 400-test module, that is
most of its fork's time, and it grows with the tests in the file. `share`
keeps each parsed text and its statement lines for the process (keyed by the
text itself, so a file that changed is parsed again): the report's bytes are
pytest's own. Where pytest moved either name, or the statement lines found
here would differ from its own on a sample, nothing is changed and only
time is lost. Standard library and pytest only.
"""

from __future__ import annotations

import ast
import bisect
import warnings
from typing import Any

MODULE = "reviewui_reports"
"""The name a run imports this file under (placed beside the children that use it)."""

_SAMPLE = '''import os


@decorated
@twice(1)
def f(x):
    try:
        y = 1
    except ValueError as e:
        y = 2
    else:
        y = 3
    finally:
        z = 4
    for i in x:
        pass
    else:
        q = (1,
             2)
    return y


class C:
    a = 1

    def g(self):
        while True:
            break
'''
"""A module whose every line the statement lines found here must place as pytest does."""


def share() -> bool:
    """Make pytest's failure reports in this process reuse each parsed source; True when done."""
    try:
        import _pytest._code.code as code
        import _pytest._code.source as source
    except ImportError:
        return False
    real_range = getattr(code, "getstatementrange_ast", None)
    real_ends = getattr(source, "get_statement_startend2", None)
    if real_range is None or real_ends is None or getattr(real_range, "_reviewui", False):
        return False
    sample = ast.parse(_SAMPLE)
    lines = len(_SAMPLE.splitlines())
    try:
        if any(real_ends(n, sample) != _startend(n, sample) for n in range(lines)):
            return False
    except Exception:
        return False
    trees: dict[str, ast.AST] = {}

    def statement_range(lineno: int, src: Any, assertion: bool = False, astnode: ast.AST | None = None) -> Any:
        if astnode is None:
            content = str(src)
            astnode = trees.get(content)
            if astnode is None:
                with warnings.catch_warnings():  # as pytest parses it (its #4260)
                    warnings.simplefilter("ignore")
                    astnode = trees[content] = ast.parse(content, "source", "exec")
        return real_range(lineno, src, assertion, astnode)

    statement_range._reviewui = True  # type: ignore[attr-defined]
    code.getstatementrange_ast = statement_range  # type: ignore[attr-defined,assignment]  # an entry's statement
    source.getstatementrange_ast = statement_range  # type: ignore[assignment]  # Source.getstatement's
    source.get_statement_startend2 = _startend
    return True


_lines: dict[int, tuple[ast.AST, list[int]]] = {}
"""id(tree) -> (the tree, kept alive, and its sorted statement lines)."""


def _startend(lineno: int, node: ast.AST) -> tuple[int, int | None]:
    """pytest's `get_statement_startend2`, its statement lines computed once per tree."""
    hit = _lines.get(id(node))
    if hit is None or hit[0] is not node:
        values: list[int] = []
        for x in ast.walk(node):
            if isinstance(x, (ast.stmt, ast.ExceptHandler)):
                if isinstance(x, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    values.extend(d.lineno - 1 for d in x.decorator_list)
                values.append(x.lineno - 1)
                for name in ("finalbody", "orelse"):
                    val = getattr(x, name, None)
                    if val:
                        values.append(val[0].lineno - 1 - 1)
        values.sort()
        hit = _lines[id(node)] = (node, values)
    values = hit[1]
    at = bisect.bisect_right(values, lineno)
    return values[at - 1], (values[at] if at < len(values) else None)
