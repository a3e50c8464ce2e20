"""What a test run can read of the head's tree: the files a stored grade's key must hold.

A grade is reused only while everything that decides it is unchanged (reuse.py).
Of the tree, a run of some tests can read: the test files, the conftest.py
and `__init__.py` files above them, every module they import (statically, transitively), every
file that is not Python (data, config, `.pth`, extension modules: all of them,
always), and `sitecustomize.py`/`usercustomize.py` wherever they are. The
imports are resolved as if every directory of the tree were on `sys.path`
(rootdir insertion, `pythonpath`, `src/` layouts, a conftest's `sys.path`
edit all covered): `import a.b` reaches every `…/a/__init__.py`, `…/a/b.py`,
`…/a/b/__init__.py` of the tree. A file appearing that could shadow one is
then in the reach too, so the key moves with it.

Anything static imports cannot follow makes the reach the whole tree
(`EVERYTHING`): a file of the closure that names a dynamic import
(`importlib`, `__import__`, `exec`, `runpy`, `pkgutil`, `pytest_plugins`,
entry points), a subprocess, source reading (`inspect`, `linecache`), or a
`.py` path; one that cannot be parsed or is over the analysis cap; a config
file naming plugins (`-p`, `plugins`); a run of the whole suite. The test is
textual and reads comments and strings too: when unsure, everything is in.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable, Iterable, Mapping

from reviewui.core.bounded import parse_python
from reviewui.core.git import run_git

EVERYTHING = "*"
"""What a reach is when static imports cannot bound it: every file of the tree."""

_DYNAMIC = re.compile(
    rb"__import__|importlib|import_module|(?<![\w.])exec\b|(?<![\w.])eval\b|(?<![\w.])compile\b|runpy|pkgutil"
    rb"|zipimport|pytest_plugins|entry_points|pkg_resources|load_module|spec_from|find_spec|__path__|getsource"
    rb"|linecache|subprocess|os\.system|popen|spawn|os\.exec|multiprocessing|\bpty\b|listdir|scandir|iterdir"
    rb"|\bglob\b|rglob|\.walk\(|\.py[icdw]?\b(?!\w)")
"""Words after which static imports no longer bound what a file can load or read (see the module docstring)."""
_CONFIG = frozenset({"pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"})
_CONFIG_PLUGINS = re.compile(rb"(^|[\s'\"=])-p\b|plugins")
_ALWAYS = frozenset({"sitecustomize.py", "usercustomize.py"})


@dataclass(frozen=True)
class Tree:
    """The head's tree: every path with its object id (a blob's, or a submodule's commit)."""

    blobs: Mapping[str, str]
    """Path -> object id."""

    def digest(self, paths: Iterable[str]) -> str:
        """A digest of `paths` with their object ids (an absent path as absent)."""
        h = hashlib.sha256()
        for p in sorted(set(paths)):
            h.update(f"{p}\0{self.blobs.get(p, '-')}\n".encode("utf-8", "surrogateescape"))
        return h.hexdigest()


def read_tree(repo_dir: str, rev: str) -> Tree:
    """Every path of commit `rev`'s tree with its object id (one `git ls-tree`)."""
    out = run_git(repo_dir, "ls-tree", "-r", "-z", "--full-tree", rev)
    blobs: dict[str, str] = {}
    for rec in out.split(b"\0"):
        meta, tab, path = rec.partition(b"\t")
        if tab:
            blobs[path.decode("utf-8", "surrogateescape")] = meta.split()[-1].decode("ascii", "replace")
    return Tree(blobs)


class Reach:
    """The files test runs can read of one tree, each file's imports parsed once (see the module docstring)."""

    def __init__(self, tree: Tree, read: Callable[[str], bytes | None]) -> None:
        self.tree = tree
        self._read = read
        self._by_tail: dict[str, list[str]] = {}
        for path in tree.blobs:
            if path.endswith(".py"):
                parts = path.split("/")
                for i in range(len(parts)):
                    self._by_tail.setdefault("/".join(parts[i:]), []).append(path)
        self._imports: dict[str, frozenset[str] | None] = {}
        others = [p for p in tree.blobs if not p.endswith(".py") or PurePosixPath(p).name in _ALWAYS]
        self._always = tree.digest(others)
        """Every file that is not Python (and the site hooks), in every reach."""
        self._wide = any(self._config_names_plugins(p) for p in tree.blobs if PurePosixPath(p).name in _CONFIG)

    def closure(self, tests: Iterable[str], sources: Iterable[tuple[str, bytes | None]] = ()) -> frozenset[str] | str:
        """The Python files runs of `tests` (node ids or paths; none: the whole suite) can import with the
        files of `sources` (path, bytes: an edited file as the run has it) in place: the test files, the
        conftests and packages above them, the sources, and all they import; or EVERYTHING."""
        more: list[str] = []
        for path, data in sources:
            names = _imports(data, path)
            if names is None:
                return EVERYTHING
            more += names
        return self.files(tests, more=more)

    def digest(self, files: frozenset[str] | str) -> str:
        """A digest of what a run with the reach `files` (a `closure`) can read: those files and every file
        that is not Python, or the whole tree."""
        if files == EVERYTHING:
            return "all:" + self.tree.digest(self.tree.blobs)
        return "some:" + self._always + ":" + self.tree.digest(files)

    def files(self, tests: Iterable[str], seeds: Iterable[str] = (), more: Iterable[str] = ()) -> frozenset[str] | str:
        """The Python files runs of `tests` can import (see `digest`), or EVERYTHING."""
        paths = {t.split("::", 1)[0] for t in tests}
        if not paths or self._wide:
            return EVERYTHING
        todo: list[str] = []
        for p in paths:
            if p not in self.tree.blobs:
                return EVERYTHING  # a directory, or a path that is no file of the tree: not bounded here
            todo.append(p)
            # the conftests above it, and the packages it is imported in (rootdir-based names)
            todo += [c for d in _ancestors(p) for n in ("conftest.py", "__init__.py")
                     if (c := _in(d, n)) in self.tree.blobs]
        todo += [s for s in seeds if s in self.tree.blobs]
        seen: set[str] = set()
        for name in more:
            todo += self._resolve(name)
        while todo:
            path = todo.pop()
            if path in seen or not path.endswith(".py"):
                continue
            seen.add(path)
            names = self._imports_of(path)
            if names is None:
                return EVERYTHING
            for name in names:
                todo += self._resolve(name)
        return frozenset(seen)

    def _imports_of(self, path: str) -> frozenset[str] | None:
        """The module names `path` imports (relative ones as `./`-prefixed paths), None when it escapes
        static imports (a dynamic word, unreadable, unparsable)."""
        if path not in self._imports:
            self._imports[path] = _imports(self._read(path), path)
        return self._imports[path]

    def _resolve(self, name: str) -> list[str]:
        """Every file of the tree `name` can import (with every directory a root), packages on the way included."""
        star = name.endswith("*")  # `from pkg import *` imports the submodules its `__all__` names
        name = name.rstrip("*").rstrip("./")
        if name.startswith("/"):  # a relative import, already a path: `/pkg/sub` for `from .sub` in pkg/
            parts = [p for p in name.split("/") if p]
            found = [f"{'/'.join(parts[:i])}/__init__.py" for i in range(1, len(parts) + 1)]
            found += [f"{'/'.join(parts)}.py", "__init__.py"]
            out = [f for f in found if f in self.tree.blobs]
        else:
            parts = [p for p in name.split(".") if p]
            out = []
            for i in range(1, len(parts) + 1):
                tail = "/".join(parts[:i])
                out += self._by_tail.get(f"{tail}.py", []) + self._by_tail.get(f"{tail}/__init__.py", [])
        if star:
            dirs = {str(PurePosixPath(f).parent) for f in out if f.endswith("__init__.py")}
            out += [p for p in self.tree.blobs if p.endswith(".py") and str(PurePosixPath(p).parent) in dirs]
        return out

    def _config_names_plugins(self, path: str) -> bool:
        data = self._read(path)
        return data is None or bool(_CONFIG_PLUGINS.search(data))


def _in(directory: str, name: str) -> str:
    return name if directory in ("", ".") else f"{directory}/{name}"


def _ancestors(path: str) -> list[str]:
    """`a/b/c.py` -> [".", "a", "a/b"]: the directories a conftest.py above the file can sit in."""
    parents = list(PurePosixPath(path).parents)
    return [str(p) for p in reversed(parents)]


def _imports(data: bytes | None, path: str) -> frozenset[str] | None:
    """The names module `path` imports, anywhere in it (a relative one as a `/`-rooted path of the tree),
    or None when static imports cannot bound it."""
    if data is None or _DYNAMIC.search(data):
        return None
    try:
        tree = parse_python(data)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level:
            parts = list(PurePosixPath(path).parent.parts)
            if node.level - 1 > len(parts):
                return None  # above the tree's root: not bounded here
            base = "/".join([*parts[: len(parts) - (node.level - 1)], *(node.module or "").split(".")])
            names.add("/" + base.strip("/"))
            names.update(f"/{base.strip('/')}/{a.name}".replace("//", "/") for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    return frozenset(names)
