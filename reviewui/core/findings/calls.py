"""`uncalled-function` and `test-mentions-only`: code that exists but is not exercised.

A function nobody calls cannot fail, so a green suite says nothing about
it. Entry points the repository cannot show a caller for (decorated
routes, fixtures and CLI commands, dunder methods, `main`, framework hooks
such as `on_mount` or `visit_Name`, public methods of classes that inherit
from a library) are left alone: the rule fires only when it can show that
nothing refers to the name.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterable

from reviewui.core.findings.model import Finding, finding
from reviewui.core.findings.refs import Ref, RefIndex
from reviewui.core.roles import DEFAULT_TEST_GLOBS, is_test_path

if TYPE_CHECKING:
    from reviewui.core.fixtures.model import ChangedSymbol, FixtureReport

PLAIN_DECORATORS = frozenset(
    "staticmethod classmethod property abstractmethod cache lru_cache cached_property wraps override "
    "final total_ordering".split()
)
"""Decorators that do not register a function anywhere (anything else might: a route, a fixture, a command)."""
ENTRY_NAMES = frozenset(
    "main setUp tearDown setUpClass tearDownClass setUpModule tearDownModule asyncSetUp asyncTearDown "
    "setup_module teardown_module setup_function teardown_function setup_method teardown_method "
    "setup_class teardown_class load_tests".split()
)
FRAMEWORK_PREFIXES = (
    "on_", "_on_", "action_", "watch_", "_watch_", "compute_", "_compute_", "validate_", "_validate_",
    "key_", "visit_", "depart_", "generic_visit", "do_", "handle_",
)
"""Method names frameworks call by convention (Textual, ast.NodeVisitor, cmd, http.server...)."""
NEUTRAL_BASES = frozenset(
    "object ABC ABCMeta Generic Protocol NamedTuple TypedDict Exception BaseException ValueError TypeError "
    "RuntimeError KeyError LookupError".split()
)
"""Library bases that never call a subclass's methods by name on their own."""


def uncalled_function(symbols: Iterable[ChangedSymbol], index: RefIndex, test_globs: Iterable[str] = DEFAULT_TEST_GLOBS) -> list[Finding]:
    """Return a finding for each added function or method that nothing calls or references.

    A source function called only from tests gets an `info` finding saying
    so (a function defined in a test file is used when tests use it); one
    that is only imported gets a warning naming the importer.
    """
    globs = tuple(test_globs)
    out: list[Finding] = []
    for sym in symbols:
        if sym.status != "added" or sym.kind not in ("function", "method"):
            continue
        node = sym.node
        short = sym.name.rsplit(".", 1)[-1]
        if is_entry_point(sym, short, node, index, globs):
            continue
        start = min([sym.line, *(d.lineno for d in getattr(node, "decorator_list", []))])
        refs = [r for r in index.refs(short) if not (r.file == sym.file and start <= r.line <= sym.end_line)]
        f = _judge(sym, short, refs, globs)
        if f is not None:
            out.append(f)
    return out


def _judge(sym: ChangedSymbol, short: str, refs: list[Ref], globs: tuple[str, ...]) -> Finding | None:
    real = [r for r in refs if r.how != "import"]
    in_source = [r for r in real if not is_test_path(r.file, globs)]
    if in_source or (real and is_test_path(sym.file, globs)):
        return None  # a helper of the tests is used when tests use it
    where = f"{sym.file}:{sym.line}"
    evidence = f"+ {where}: def {short}(...)"
    if real:
        tests = sorted({r.file for r in real})
        verb = "called" if any(r.how == "call" for r in real) else "referenced"
        return finding(
            "uncalled-function",
            f"{sym.name} is {verb} only from tests ({_list(tests)}); no source code uses it",
            file=sym.file,
            line=sym.line,
            symbol=sym.name,
            evidence=evidence + "\n" + _refs_evidence(real),
            severity="info",
        )
    imports = sorted({r.file for r in refs if r.how == "import"})
    if imports:
        return finding(
            "uncalled-function",
            f"{sym.name} is imported by {_list(imports)} but never called",
            file=sym.file,
            line=sym.line,
            symbol=sym.name,
            evidence=evidence + "\n" + _refs_evidence([r for r in refs if r.how == "import"]),
        )
    return finding(
        "uncalled-function",
        f"{sym.name} is added but nothing in the repository calls or references it",
        file=sym.file,
        line=sym.line,
        symbol=sym.name,
        evidence=evidence,
    )


def is_entry_point(sym: ChangedSymbol, short: str, node: ast.AST, index: RefIndex, globs: tuple[str, ...]) -> bool:
    """True when something outside the repository is likely to call the function."""
    if short.startswith("__") and short.endswith("__"):
        return True
    if short in ENTRY_NAMES or short.startswith("pytest_"):
        return True
    if short.startswith("test") and is_test_path(sym.file, globs):
        return True
    if sym.kind == "method" and short.startswith(FRAMEWORK_PREFIXES):
        return True
    for dec in getattr(node, "decorator_list", []):
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
        if name not in PLAIN_DECORATORS:
            return True
    if sym.kind == "method":
        qual = sym.qualname or sym.name
        parts = qual.split(".")
        cls = parts[-2] if len(parts) >= 2 else ""
        if not short.startswith("_") and inherits_from_library(cls, index):
            return True
    return False


def inherits_from_library(cls: str, index: RefIndex) -> bool:
    """True when class `cls` (or an ancestor defined in the repository) has a base from outside it."""
    index.refs(cls)  # builds the class table
    seen: set[str] = set()
    todo = [cls]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for bases in index.classes.get(name, []):
            for b in bases:
                if b in NEUTRAL_BASES:
                    continue
                if b not in index.classes:
                    return True
                todo.append(b)
    return False


def test_mentions_only(report: "FixtureReport | None") -> list[Finding]:
    """Return a finding for each changed symbol tests import or mention but never call."""
    out: list[Finding] = []
    for s in report.symbols if report is not None else ():
        if s.kind == "class":
            # A class is often built by the code under test and only named by the test
            # (isinstance, query_one, pytest.raises): a mention cannot prove it unexercised.
            continue
        calling, mentioning = s.tests_calling, s.tests_importing_only
        if calling or s.tests_named_after or not mentioning:
            continue
        out.append(
            finding(
                "test-mentions-only",
                f"tests mention {s.name} but none calls it and none is named after it ({_list(list(mentioning))})",
                file=s.file,
                line=s.line,
                symbol=s.name,
                evidence="\n".join(f"mentioned by {t}" for t in mentioning[:10]),
            )
        )
    return out


def _list(items: list[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def _refs_evidence(refs: list[Ref]) -> str:
    return "\n".join(f"{r.how}: {r.file}:{r.line}" for r in refs[:10])


# pytest would collect these names from any test module that imports them.
test_mentions_only.__test__ = False  # type: ignore[attr-defined]
