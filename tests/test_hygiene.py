"""The core never imports Textual or Rich: checked in a fresh interpreter."""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import reviewui.core
from tests.clirun import ROOT
from tests.gitrepo import make_repo


def test_core_imports_no_textual_or_rich() -> None:
    modules = [m.name for m in pkgutil.walk_packages(reviewui.core.__path__, "reviewui.core.")]
    assert "reviewui.core.diff" in modules and len(modules) > 5
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "bad = sorted(k for k in sys.modules if k.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""


def _all_modules() -> list[str]:
    import reviewui

    # __main__ runs the CLI when imported: that is its job, not an import to test.
    names = (m.name for m in pkgutil.walk_packages(reviewui.__path__, "reviewui."))
    return ["reviewui", *(n for n in names if n != "reviewui.__main__")]


FORKED_IMPORTS = """
import importlib, os, signal, subprocess, sys
mods = MODS
# What reviewui imports from outside itself, as a throw-away interpreter that imports all of it finds.
probe = "import importlib, sys\\nfor m in %r:\\n    try: importlib.import_module(m)\\n    except Exception: pass\\n" % (mods,) + (
    "print('\\\\n'.join(sorted(k for k in sys.modules if k.split('.')[0] != 'reviewui')))")
outside = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
for name in outside:
    try:
        importlib.import_module(name)
    except Exception:
        pass  # a module of the standard library or a dependency that only imports as a part of another
loaded = sorted(k for k in sys.modules if k.split(".")[0] == "reviewui")
assert not loaded, loaded  # no module of reviewui before the forks: each one is imported first thing
bad = []
for m in mods:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        signal.alarm(60)
        try:
            importlib.import_module(m)
            os._exit(0)
        except BaseException as e:
            os.write(w, f"{type(e).__name__}: {e}".encode()[:2000])
            os._exit(1)
    os.close(w)
    said = b""
    while chunk := os.read(r, 4096):
        said += chunk
    os.close(r)
    if os.waitpid(pid, 0)[1]:
        bad.append(m + ": " + (said.decode(errors="replace") or "died"))
print("\\n".join(bad))
"""


def test_every_module_imports_on_its_own() -> None:
    # Each module first thing in an interpreter that holds no module of reviewui: an import cycle that
    # only works when something else was imported first fails here ("partially initialized module").
    # The interpreters are forks of one that has already imported what reviewui imports from outside
    # itself (Textual, Rich, pytest …): a fresh interpreter per module spent two minutes of the suite
    # re-importing those, and they cannot hide a circle among reviewui's own modules.
    modules = _all_modules()
    assert {"reviewui.headless", "reviewui.cli", "reviewui.core.run.runner", "reviewui.core.run.warm_runner"} <= set(modules)
    code = FORKED_IMPORTS.replace("MODS", repr(modules))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""


def test_no_import_cycle_between_modules() -> None:
    # Module-level imports (the ones that run at import time) form no cycle.
    import ast
    from pathlib import Path

    root = Path(ROOT) / "reviewui"
    graph: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root.parent).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        deps: set[str] = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("reviewui") and node.level == 0:
                deps.add(node.module)
                deps.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.startswith("reviewui"))
        graph[name] = deps
    graph = {k: {d for d in v if d in graph and d != k} for k, v in graph.items()}
    # Package __init__ modules are skipped as edges into themselves; find any cycle.
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, stack: list[str]) -> bool:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycle.extend(stack[stack.index(dep):] + [dep] if dep in stack else [node, dep])
                return True
            if dep not in state and visit(dep, [*stack, dep]):
                return True
        state[node] = 2
        return False

    for start in sorted(graph):
        if start not in state and visit(start, [start]):
            break
    assert cycle == [], " -> ".join(cycle)


def test_the_first_screen_imports_no_heavy_modules() -> None:
    # The review screen paints before GitPython and the bite engine load (issue 16): an
    # import of either at module level in a screen or part puts them before the first paint.
    # Nor does the CLI's parser load the transcript formats to list their names in its help,
    # nor the screen pygments (the first lines are drawn plain until the lexer is built) or the
    # matrix's DataTable, nor `open` the headless commands, nor the bite report and notes
    # models (loaded with the first bite or verdict: ~20 ms of the start).
    code = (
        "import sys\n"
        "import reviewui.cli, reviewui.ui.app, reviewui.ui.screens.review\n"
        "reviewui.cli.build_parser()\n"
        "heavy = ('git', 'reviewui.core.bite.engine', 'reviewui.core.notes.signing',\n"
        "         'reviewui.core.transcript.registry', 'reviewui.core.transcript.model',\n"
        "         'pygments', 'textual.widgets._data_table', 'reviewui.headless',\n"
        "         'reviewui.core.bite.report', 'reviewui.core.notes.model')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""


def test_opening_a_review_loads_nothing_the_first_screen_does_not_show(tmp_path: Path) -> None:
    # Issue 16: what `reviewui open` imports and parses before the first paint. A session on a
    # repo whose pyproject.toml has no reviewui table parses no TOML; the verdict, comment and
    # findings dialogs, the transcript's sparkline and the gzip/zip readers load when used; the
    # evidence ledger and the reviewer's saved state (~15 ms of imports) right after the paint.
    make_repo(tmp_path, {"pyproject.toml": "[tool.black]\nline-length = 99\n", "a.py": "x = 1\n"},
              {"a.py": "x = 2\n"})
    code = (
        "import sys\n"
        "from reviewui.core.session import ReviewSession\n"
        f"s = ReviewSession.open({str(tmp_path)!r}, 'agent/work')\n"
        "assert [f.path for f in s.diff.files] == ['a.py']\n"
        "parsed = 'tomllib' in sys.modules\n"
        "import reviewui.cli, reviewui.ui.app, reviewui.ui.screens.review\n"
        "late = ('gzip', 'zipfile', 'reviewui.ui.screens.verdict', 'reviewui.ui.screens.text_prompt',\n"
        "        'reviewui.ui.screens.findings', 'textual.widgets._sparkline', 'json',\n"
        "        'reviewui.core.evidence', 'reviewui.core.state', 'reviewui.core.findings.model',\n"
        "        'reviewui.ui.widgets.results_panel', 'reviewui.ui.bindings',\n"
        # the bite results and witness records: 7 dataclasses, ~8 ms of imports (verdict_words.py, budget.py)
        "        'reviewui.core.bite.guard_report', 'reviewui.core.bite.revert_result', 'reviewui.core.witness.model')\n"
        "print(parsed, ','.join(m for m in late if m in sys.modules))\n"
    )
    # Without coverage's variables: measured (a bite-check of reviewui itself), every Python
    # started would load coverage, and with it tomllib and json, before any line of ours.
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    assert out.stdout.split() == ["False"]


def test_the_bite_engine_does_not_import_pytest() -> None:
    # Runs only need the batch plugins' files: importing revert_batch_child for its path took
    # pytest along (~0.15 s of every `reviewui bite` start).
    code = "import sys\nimport reviewui.core.bite.engine\nprint('pytest' in sys.modules, '_pytest' in sys.modules)\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_") and k != "PYTEST_PLUGINS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    assert out.stdout.split() == ["False", "False"]


def test_the_revert_plugin_reads_the_variable_the_engine_sets() -> None:
    from reviewui.core.bite import revert_batch
    from reviewui.core.inside import revert_batch_child

    assert revert_batch.REQUEST_VAR == revert_batch_child.REQUEST_VAR
    assert revert_batch.CHILD.read_text(encoding="utf-8") == Path(revert_batch_child.__file__).read_text(encoding="utf-8")


def test_the_runner_never_imports_the_bite_engine_or_the_inside_code() -> None:
    # run/ is below bite/: the sandboxed runner knows nothing of reverts or guards. inside/ runs in
    # the project's Python: reviewui's modules place its files, they never import its plugins.
    import ast

    core = Path(reviewui.core.__path__[0])
    wrong: list[str] = []
    for path in sorted((core / "run").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            wrong += [f"{path.name}: {n}" for n in names if n.startswith(("reviewui.core.bite", "reviewui.core.inside."))]
    assert (core / "run" / "worktree.py").is_file() and not wrong, wrong
