"""Which hunks are bite-checked and which tests guard them.

Hunks: source files and code-like `other` files; files that are not code
(toml, yaml, cfg, ini, md, rst, txt, json, lock files) get the verdict
`not-code` and are never reverted unless `include_config` is set.

Tests, found without being told (`static_selection`), by the base commit's
own test layout (core/test_layout.py: pytest's `python_files`, a root
test.py, tests.py, *_tests.py):
- test modules the branch added or changed;
- test files that import a changed test helper, a changed `__init__.py` of a
  test package, or that sit under a changed conftest.py;
then, from the baseline run (engine), tests that execute the changed lines
(coverage) and tests that open a changed data file. With none of the static
kind the baseline runs the whole suite and each hunk runs only the tests
that execute it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable, Iterable

from reviewui.core.bounded import parse_python
from reviewui.core.diff import Diff
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk
from reviewui.core.errors import ReviewError
from reviewui.core.roles import NOT_CODE_NAMES, is_data_file
from reviewui.core.test_layout import TestLayout

DEFAULT_LAYOUT = TestLayout()
CODE_LIKE_OTHER = frozenset({".toml", ".cfg", ".ini", ".json", ".yaml", ".yml", ".html", ".css", ".j2", ".jinja",
                             ".tmpl", ".xml", ".env", ".properties", ".mk"})
CODE_LIKE_NAMES = frozenset({"Makefile", "Dockerfile", "Justfile", "Rakefile", "Gemfile"})
NOT_CODE_SUFFIXES = frozenset({".toml", ".yaml", ".yml", ".cfg", ".ini", ".md", ".rst", ".txt", ".json", ".lock"})


def is_test_file(path: str, layout: TestLayout = DEFAULT_LAYOUT) -> bool:
    """True for a test module of `layout` (by default: test_*.py, *_test.py, test.py, tests.py, *_tests.py)."""
    return layout.is_module(path)


def is_not_code(path: str) -> bool:
    """True for configuration, documentation, data and lock files."""
    p = PurePosixPath(path)
    return p.name in NOT_CODE_NAMES or p.suffix.lower() in NOT_CODE_SUFFIXES


def selected_test_files(diff: Diff, layout: TestLayout = DEFAULT_LAYOUT) -> list[str]:
    """Test modules the branch added or changed (not deleted, not conftest, not helpers)."""
    return [
        f.path for f in diff.files
        if f.role == "test" and f.status != "deleted" and not f.binary and is_test_file(f.path, layout)
    ]


def is_revertible(f: FileDiff, include_config: bool = True) -> bool:
    """True for files whose hunks are bite-checked: source, or code-like `other`; text only.

    With `include_config` false, files that are not code are not revertible.
    """
    if f.binary or f.symlink or not f.hunks:  # a symlink is data: its target is no code to revert
        return False
    if not include_config and is_not_code(f.path):
        return False
    if f.role == "source":
        return True
    p = PurePosixPath(f.path)
    return f.role == "other" and (p.suffix.lower() in CODE_LIKE_OTHER or p.name in CODE_LIKE_NAMES)


def not_code_hunks(diff: Diff) -> list[tuple[FileDiff, Hunk]]:
    """Hunks that would be checked with `include_config` but are not code."""
    return [(f, h) for f in diff.files if is_revertible(f) and not is_revertible(f, False) for h in f.hunks]


def checkable_hunks(diff: Diff, wanted: list[tuple[str, int]] | None = None,
                    include_config: bool = True) -> list[tuple[FileDiff, Hunk]]:
    """The hunks a sweep checks, or just `wanted` ones. Raises ReviewError for unknown/test hunks."""
    if wanted is None:
        return [(f, h) for f in diff.files if is_revertible(f, include_config) for h in f.hunks]
    out: list[tuple[FileDiff, Hunk]] = []
    for path, index in wanted:
        f = diff.file(path)
        if f is None:
            raise ReviewError(f"{path} is not changed on this branch")
        if not 0 <= index < len(f.hunks):
            raise ReviewError(f"{path} has no hunk {index + 1} (it has {len(f.hunks)})")
        if f.symlink:
            raise ReviewError(f"{path} is a symlink: only source hunks are bite-checked")
        if not is_revertible(f):
            raise ReviewError(f"{path} is a {f.role} file: only source hunks are bite-checked")
        out.append((f, f.hunks[index]))
    return out


def parse_hunk_spec(spec: str, diff: Diff) -> list[tuple[str, int]]:
    """Parse `--hunk FILE[:N]` into (file, 0-based index) pairs (all hunks of FILE without N).

    N is the hunk's number as people count, from 1 (what the text output shows).
    Raises ReviewError for an unknown file or a number the file has no hunk for.
    """
    path, sep, idx = spec.rpartition(":")
    if not sep or not idx.isdigit() or diff.file(spec) is not None:
        path, idx = spec, ""
    f = diff.file(path)
    if f is None:
        raise ReviewError(f"--hunk: {path} is not changed on this branch")
    if idx:
        return [(f.path, hunk_number_to_index(path, int(idx), len(f.hunks)))]
    return [(f.path, h.index) for h in f.hunks]


def hunk_number_to_index(path: str, number: int, count: int) -> int:
    """The 0-based index of hunk `number` (1-based) of `path`, which has `count` hunks.

    Raises ReviewError naming the valid range.
    """
    if not 1 <= number <= count:
        raise ReviewError(f"--hunk: {path} has no hunk {number} (its hunks are numbered 1 to {count})")
    return number - 1


@dataclass(frozen=True)
class StaticSelection:
    """Test files chosen from the diff alone, and why."""

    changed: tuple[str, ...]
    """Test files the branch added or changed."""
    importers: tuple[str, ...]
    """Test files that import a changed helper / `__init__.py` or sit under a changed conftest."""
    data_files: tuple[str, ...]
    """Changed files that are neither Python nor revertible code: tests may read them."""

    @property
    def files(self) -> tuple[str, ...]:
        """Every statically selected test file, once."""
        return tuple(dict.fromkeys([*self.changed, *self.importers]))


def static_selection(diff: Diff, tree: Iterable[str], read: Callable[[str], str | None],
                     layout: TestLayout = DEFAULT_LAYOUT) -> StaticSelection:
    """Select test files from the diff and the head tree (`read(path)` gives a head file's text)."""
    files = list(tree)
    changed = selected_test_files(diff, layout)
    helpers = [f for f in diff.files if f.role == "test" and f.status != "deleted" and not f.binary
               and f.path.endswith(".py") and not is_test_file(f.path, layout)]
    tests = [p for p in files if is_test_file(p, layout) and p not in changed]
    importers: list[str] = []
    helper_modules = {h.path: _module_names(h.path) for h in helpers if PurePosixPath(h.path).name != "conftest.py"}
    conftest_dirs = [str(PurePosixPath(h.path).parent) for h in helpers if PurePosixPath(h.path).name == "conftest.py"]
    for t in tests:
        if any(d == "." or t.startswith(d + "/") for d in conftest_dirs):
            importers.append(t)
            continue
        if not helper_modules:
            continue
        text = read(t)
        imported = _imports(t, text) if text is not None else set()
        if any(n in imported for names in helper_modules.values() for n in names):
            importers.append(t)
    data = tuple(f.path for f in diff.files if f.status != "deleted" and is_data_file(f.path, f.role))
    return StaticSelection(tuple(changed), tuple(importers), data)


def _module_names(path: str) -> set[str]:
    """Every dotted name `path` may be imported as (each suffix of its package path)."""
    p = PurePosixPath(path)
    parts = list(p.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return {".".join(parts[i:]) for i in range(len(parts))}


def _imports(path: str, text: str) -> set[str]:
    """Dotted modules `path` imports, relative imports resolved, with `from m import n` giving m and m.n."""
    try:
        tree = parse_python(text)
    except (SyntaxError, ValueError):
        return set()
    package = list(PurePosixPath(path).parent.parts)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out.add(a.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                base = ".".join([*anchor, *([base] if base else [])])
            if base:
                out.add(base)
            for a in node.names:
                out.add(f"{base}.{a.name}" if base else a.name)
    return out


def selection_note(static: StaticSelection, selected: tuple[str, ...], ran: tuple[str, ...],
                   openers: tuple[str, ...], coverage: object | None) -> str:
    """One line: how many tests were selected and why."""
    def in_files(files: tuple[str, ...]) -> int:
        return sum(1 for t in ran if t.split("::", 1)[0] in files)

    parts = []
    if static.changed:
        parts.append(f"{in_files(static.changed)} in changed test files")
    if static.importers:
        parts.append(f"{in_files(static.importers)} in test files importing a changed helper or conftest")
    if openers:
        parts.append(f"{len(openers)} reading a changed data file")
    if selected:
        return f"{len(ran)} tests: " + ", ".join(parts)
    why = "; ".join(parts) if parts else "no test file changed"
    per_hunk = ("each hunk runs the tests that execute its lines" if coverage is not None
                else "no coverage map, each hunk runs them all")
    return f"{len(ran)} tests of the whole suite ({why}); {per_hunk}"
