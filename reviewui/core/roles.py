"""Classify changed files as `test`, `source` or `other`.

Tests follow pytest's conventions by default (test_*.py, *_test.py,
conftest.py, anything under a tests/ or test/ folder) and the names projects
give a suite pytest does not collect by name (test.py, tests.py,
*_tests.py); source is any file with a programming-language extension;
everything else (docs, data, config, binaries) is `other`. The globs can be
replaced per repository; the base commit's pytest configuration adds its
own (core/test_layout.py).
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase, translate
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Iterable, Literal

Role = Literal["test", "source", "other"]

ROLE_ORDER: tuple[Role, ...] = ("source", "test", "other")
"""The order a review lists the roles in (the file list's groups): its first file is the first shown."""

DEFAULT_TEST_GLOBS: tuple[str, ...] = (
    "test_*.py",
    "*_test.py",
    "conftest.py",
    "tests/**",
    "test/**",
    "test.py",
    "tests.py",
    "*_tests.py",
)

SOURCE_SUFFIXES: frozenset[str] = frozenset(
    ".py .pyi .pyx .js .jsx .mjs .cjs .ts .tsx .go .rs .c .h .cc .cpp .hpp .cxx .java .kt .kts "
    ".scala .rb .php .swift .m .mm .cs .fs .ex .exs .erl .hs .ml .lua .pl .pm .r .jl .dart "
    ".sh .bash .zsh .sql .vue .svelte .clj .groovy .nim .zig".split()
)


def _match(path: str, pattern: str) -> bool:
    """True when `path` matches `pattern`.

    A pattern without a slash matches the file name at any depth; `dir/**`
    matches anything below a folder called `dir` at any depth; `dir/**/name`
    a file called `name` anywhere below the top-level folder `dir`.
    """
    # Plain string work: this runs for every changed file times every glob.
    if pattern.endswith("/**"):
        folder = pattern[:-3]
        return path.startswith(folder + "/") or f"/{folder}/" in f"/{path}"
    if "/**/" in pattern:
        folder, _, name = pattern.partition("/**/")
        return (folder in ("", ".") or path.startswith(folder + "/")) and fnmatchcase(path.rpartition("/")[2], name)
    if "/" not in pattern:
        return fnmatchcase(path.rpartition("/")[2], pattern)
    return fnmatchcase(path, pattern)


class _GlobSet:
    """A tuple of globs split by shape, to match many paths under `_match`'s rules at once.

    A session classifies every changed file (and the tree's test modules) before
    the first screen, beside the UI's import: eight `fnmatchcase` calls a path
    were ~15 µs, where one pattern over the file name and two string tests are ~2.
    """

    def __init__(self, globs: tuple[str, ...]) -> None:
        names = [g for g in globs if "/" not in g]
        # fnmatch's own translation of each, anchored at both ends: the name matches one of them exactly
        self.names = re.compile("|".join(translate(g) for g in names)) if names else None
        self.folders = tuple(g[:-3] for g in globs if g.endswith("/**"))
        self.others = tuple(g for g in globs if "/" in g and not g.endswith("/**"))

    def match(self, path: str) -> bool:
        if self.names is not None and self.names.match(path.rpartition("/")[2]):
            return True
        if self.folders:
            inside = f"/{path}"
            if any(path.startswith(f + "/") or f"/{f}/" in inside for f in self.folders):
                return True
        return any(_match(path, g) for g in self.others)


@lru_cache(maxsize=64)
def _glob_set(globs: tuple[str, ...]) -> _GlobSet:
    return _GlobSet(globs)


def matches_any(path: str, globs: Iterable[str]) -> bool:
    """True when `path` matches one of `globs` (same rules as the test globs)."""
    if isinstance(globs, tuple):
        return _glob_set(globs).match(path)
    return any(_match(path, g) for g in globs)


def is_test_path(path: str, test_globs: Iterable[str] = DEFAULT_TEST_GLOBS) -> bool:
    """True when `path` is a test file under the given globs."""
    return matches_any(path, test_globs)


def classify(path: str, test_globs: Iterable[str] = DEFAULT_TEST_GLOBS) -> Role:
    """Return the role of `path`: `test`, `source` or `other`."""
    if is_test_path(path, test_globs):
        return "test"
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    if dot > 0 and name[dot:].lower() in SOURCE_SUFFIXES:
        return "source"
    return "other"


NOT_CODE_NAMES = frozenset({"Pipfile.lock", "poetry.lock", "uv.lock", "setup.cfg", "tox.ini", ".pre-commit-config.yaml"})
"""Files that are configuration or lock files whatever their suffix."""


DATA_SUFFIXES = frozenset({".json", ".csv", ".tsv", ".txt", ".yaml", ".yml", ".xml", ".html", ".dat", ".bin",
                           ".toml", ".ini", ".cfg", ".jsonl", ".ndjson", ".sql", ".pem", ".svg", ".png"})
CONFIG_NAMES = frozenset({"pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", ".pre-commit-config.yaml",
                          "requirements.txt", "MANIFEST.in", ".coveragerc", "mkdocs.yml", ".readthedocs.yaml"})


def is_data_file(path: str, role: str) -> bool:
    """True for a changed file tests may read: anything non-Python under the tests, or data-like files."""
    p = PurePosixPath(path)
    if p.suffix == ".py" or role == "source" or p.name in CONFIG_NAMES or p.name in NOT_CODE_NAMES:
        return False
    if p.parts and p.parts[0].startswith(".") or p.suffix.lower() in (".md", ".rst", ".lock"):
        return False
    return role == "test" or p.suffix.lower() in DATA_SUFFIXES
