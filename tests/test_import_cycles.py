"""No import circle among reviewui's modules: imports inside functions and under TYPE_CHECKING count.

A helper two modules need lives below both; an import moved into a function
only hides a circle (issue 43). tests/import_graph.py finds them.
"""

from __future__ import annotations

from pathlib import Path

from tests.clirun import ROOT
from tests.import_graph import circles, import_graph


def test_no_import_cycles() -> None:
    graph = import_graph(Path(ROOT) / "reviewui")
    assert len(graph) > 200 and "reviewui.core.session" in graph["reviewui.cli"] | {
        d for m in graph["reviewui.cli"] for d in graph[m]}
    found = circles(graph)
    assert found == [], "\n".join("circle: " + " ".join(c) for c in found)


def test_the_finder_sees_a_circle_through_an_import_inside_a_function(tmp_path: Path) -> None:
    pkg = tmp_path / "pkgx"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkgx.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .. import c\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkgx.a import X\n")
    (pkg / "d.py").write_text("import pkgx.a\n")  # imports into the circle, is not part of it
    assert circles(import_graph(pkg)) == [["pkgx.a", "pkgx.c", "pkgx.sub.b"]]
    (pkg / "c.py").write_text("X = 1\n")
    assert circles(import_graph(pkg)) == []
