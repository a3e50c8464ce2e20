"""reviewui's import graph, every import counted (inside functions and under TYPE_CHECKING too), and its circles.

For the hygiene test: a circle is a set of modules each reaching the others by
imports (a strongly connected component of more than one module), found by
Tarjan's algorithm. An import inside a function still makes a circle: it is a
dependency all the same, only paid later.
"""

from __future__ import annotations

import ast
from pathlib import Path


def module_names(package: Path) -> dict[str, Path]:
    """Module name -> file, for every module of the package at `package` (a package is its __init__)."""
    out: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, anywhere in its body (relative imports resolved)."""
    modules = module_names(package)
    top = package.name

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here
                    for _ in range(node.level - 1):
                        up = up.rpartition(".")[0]
                    base = f"{up}.{node.module}" if node.module else up
                # `from pkg import mod` runs pkg (its __init__) and imports the module pkg.mod;
                # `from mod import name`, the module mod
                targets = [base, *(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules)]
            for target in targets:
                if target.split(".")[0] != top:
                    continue
                found = resolve(target)
                if found is not None and found != name:
                    deps.add(found)
        graph[name] = deps
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every set of modules that import each other, round and round (sorted; none when the graph is a DAG)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0

    def connect(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                connect(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)
