"""Who mentions a name, anywhere in the repository at the head commit.

Matching is by bare name (`foo` for `pkg.mod.foo` and `obj.foo`), which
over-counts references and so keeps `uncalled-function` quiet whenever it
cannot be sure. Each reference says how the name is used: called, merely
referenced (passed, assigned, returned), imported, or named in a string
(`__all__`, `getattr(obj, "foo")`, an entry point in a config file).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from reviewui.core.findings.source import TreeSource

How = Literal["call", "ref", "import", "string", "config"]

CONFIG_SUFFIXES = frozenset(
    ".toml .cfg .ini .yaml .yml .json .sh .bash .ps1 .bat .html .jinja .jinja2 .j2 .tmpl .txt".split()
)
CONFIG_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile", "Dockerfile", "Procfile", "justfile", "Justfile"})
MAX_CONFIG_BYTES = 1_000_000
_STRING_NAME = re.compile(r"^[A-Za-z_][\w.:]*$")


@dataclass(frozen=True)
class Ref:
    """One place a name is used."""

    file: str
    """Repository-relative path."""
    line: int
    """1-based line."""
    how: How
    """`call`, `ref`, `import`, `string` (a Python string) or `config` (a non-Python file)."""


class RefIndex:
    """Every use of every name in the repository's Python (and config) files at one commit."""

    def __init__(self, source: TreeSource) -> None:
        self.source = source
        self._refs: dict[str, list[Ref]] | None = None
        self._config: dict[str, str] | None = None
        self.classes: dict[str, list[list[str]]] = {}
        """Class name -> base-class names of each class defined with that name."""

    def refs(self, name: str) -> list[Ref]:
        """Return every use of `name` (Python files, then config files)."""
        if self._refs is None:
            self._build()
        assert self._refs is not None
        out = list(self._refs.get(name, ()))
        out += self._config_refs(name)
        return out

    def _build(self) -> None:
        refs: dict[str, list[Ref]] = {}
        for path, tree in self.source.trees().items():
            _index_tree(path, tree, refs, self.classes)
        self._refs = refs

    def _config_refs(self, name: str) -> list[Ref]:
        if self._config is None:
            paths = [p for p in self.source.paths if _is_config(p)]
            self.source.load(paths)
            self._config = {}
            for p in paths:
                data = self.source.data(p)
                if data is not None and len(data) <= MAX_CONFIG_BYTES and b"\0" not in data[:8000]:
                    self._config[p] = data.decode("utf-8", "replace")
        word = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
        out: list[Ref] = []
        for p, text in self._config.items():
            m = word.search(text)
            if m:
                out.append(Ref(p, text.count("\n", 0, m.start()) + 1, "config"))
        return out


def _is_config(path: str) -> bool:
    p = PurePosixPath(path)
    return p.suffix.lower() in CONFIG_SUFFIXES or p.name in CONFIG_NAMES


def _index_tree(path: str, tree: ast.Module, refs: dict[str, list[Ref]], classes: dict[str, list[list[str]]]) -> None:
    # One walk collects everything; names are classified once every call site is known.
    called: set[int] = set()
    aliases: dict[str, str] = {}
    uses: list[ast.Name | ast.Attribute | ast.Constant] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)):
            if not isinstance(node.ctx, ast.Store):
                uses.append(node)
        elif isinstance(node, ast.Call):
            called.add(id(node.func))
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, str) and len(node.value) <= 200 and _STRING_NAME.match(node.value):
                uses.append(node)
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if a.name != "*":
                    refs.setdefault(a.name, []).append(Ref(path, node.lineno, "import"))
                    if a.asname and a.asname != a.name:
                        aliases[a.asname] = a.name
        elif isinstance(node, ast.ClassDef):
            classes.setdefault(node.name, []).append([_base_name(b) for b in node.bases])
    for node in uses:
        how: How
        if isinstance(node, ast.Constant):
            # "foo", "pkg.mod.foo", "pkg.mod:foo" all name foo
            name, how = re.split(r"[.:]", str(node.value))[-1], "string"  # only str constants are in `uses`
        else:
            name = node.id if isinstance(node, ast.Name) else node.attr
            how = "call" if id(node) in called else "ref"
        if not name:
            continue
        line = getattr(node, "lineno", 0)
        refs.setdefault(name, []).append(Ref(path, line, how))
        if name in aliases:
            refs.setdefault(aliases[name], []).append(Ref(path, line, how))


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Subscript):  # Generic[T], Base[int]
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return "?"
