"""The code under test is the scratch's: editable installs, src layouts, PYTHONPATH, warm = cold."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from reviewui.core.bite import origin
from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo

SITE = sysconfig.get_paths()["purelib"]

SRC_BASE = {
    "pyproject.toml": "[project]\nname = 'pkg'\nversion = '0'\n",
    "src/pkg/__init__.py": "",
    "src/pkg/mod.py": "def clamp(x, lo, hi):\n    return x\n",
    "src/pkg/other.py": "def label(x):\n    return 'x'\n",
    "testing/helpers.py": "LOW = 0\n",
}
SRC_BRANCH = {
    "src/pkg/mod.py": "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    return x\n",
    "src/pkg/other.py": "def label(x):\n    return 'value=' + str(x)\n",
    "tests/test_mod.py": (
        "from helpers import LOW\nfrom pkg.mod import clamp\nfrom pkg.other import label\n\n\n"
        "def test_clamp():\n    assert clamp(-5, LOW, 10) == 0\n\n\n"
        "def test_label_runs():\n    label(3)\n"
    ),
}


def _python_with(tmp: Path, pth: str) -> str:
    """A throw-away venv whose site-packages holds `pth` (as an editable install writes it)
    plus a line making this venv's packages (pytest, coverage) importable."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "zz_reviewui_test.pth").write_text(f"{SITE}\n", encoding="utf-8")
    (site / "__editable__pkg.pth").write_text(pth, encoding="utf-8")
    return str(venv / "bin" / "python")


def _verdicts(report) -> dict[str, str]:
    return {r.file: r.verdict for r in report.results}


def test_editable_install_of_the_reviewers_checkout_still_bites(tmp_path: Path, monkeypatch) -> None:
    # The reviewer's checkout is at the branch head and installed editable: without the
    # scratch's src first, every revert would be invisible and every hunk toothless.
    rb = make_repo(tmp_path / "r", SRC_BASE, SRC_BRANCH, stay="agent/work")
    python = _python_with(tmp_path, f"{rb.root / 'src'}\n{rb.root / 'testing'}\n")
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), test_cmd=f"{python} -m pytest", jobs=2)
    assert rep.baseline.status == "green", rep.baseline.reason
    assert _verdicts(rep) == {"src/pkg/mod.py": "bites", "src/pkg/other.py": "toothless"}


def test_a_module_from_outside_the_scratch_is_broken_not_toothless(tmp_path: Path) -> None:
    # An import hook ahead of the path (as some editable installers install) that serves
    # `pkg` from the reviewer's checkout whatever sys.path says: the run cannot count.
    # The sandbox hides the reviewer's checkout, so the hook serves a copy of it from inside
    # the test Python's own prefix (visible read-only in the sandbox), as an installed copy would be.
    rb = make_repo(tmp_path / "r", SRC_BASE, SRC_BRANCH, stay="agent/work")
    python = _python_with(tmp_path, "")
    shadow = Path(python).parents[1] / "shadow"
    shutil.copytree(rb.root / "src" / "pkg", shadow / "pkg")
    shutil.copytree(rb.root / "testing", shadow / "testing")
    # The copy is found beside the hook (the sandbox shows the prefix at a neutral path: run/interp.py).
    hook = (
        "import os, sys, importlib.util, importlib.abc\n"
        "HERE = os.path.dirname(os.path.abspath(__file__))\n"
        "class F(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'pkg':\n"
        "            return importlib.util.spec_from_file_location('pkg', os.path.join(HERE, 'pkg', '__init__.py'),"
        " submodule_search_locations=[os.path.join(HERE, 'pkg')])\n"
        "sys.meta_path.insert(0, F())\n"
    )
    (shadow / "reviewui_test_hook.py").write_text(hook, encoding="utf-8")
    site = next((Path(python).parents[1] / "lib").glob("python*/site-packages"))
    (site / "__editable__pkg.pth").write_text(f"{shadow}\n{shadow / 'testing'}\nimport reviewui_test_hook\n",
                                              encoding="utf-8")
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), test_cmd=f"{python} -m pytest", jobs=1)
    assert rep.baseline.status == "broken"
    assert "tests imported pkg" in rep.baseline.reason and "not the scratch (editable install?)" in rep.baseline.reason
    assert str(shadow / "pkg") in rep.baseline.reason
    assert {r.verdict for r in rep.results} == {"skipped"} and rep.exit_code == 3


def test_relative_pythonpath_in_test_cmd_warm_and_cold_agree(tmp_path: Path, monkeypatch) -> None:
    # `testing/` holds an unchanged helper only PYTHONPATH finds; relative, it must resolve
    # in the scratch for the warm forks exactly as for a cold run.
    use_venv_python(monkeypatch)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    rb = make_repo(tmp_path / "r", SRC_BASE, SRC_BRANCH)
    t, d = load(rb.root)
    cmd = "PYTHONPATH=src:testing python -m pytest"
    warm = run_bite(t, d, Settings(), test_cmd=cmd, jobs=2)
    cold = run_bite(t, d, Settings(warm_runner=False), test_cmd=cmd, jobs=2)
    assert warm.baseline.status == cold.baseline.status == "green", (warm.baseline.reason, cold.baseline.reason)
    want = {"src/pkg/mod.py": "bites", "src/pkg/other.py": "toothless"}
    assert _verdicts(warm) == _verdicts(cold) == want
    assert warm.test_command == cmd


def test_reviewers_relative_pythonpath_resolves_in_the_scratch(tmp_path: Path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    monkeypatch.setenv("PYTHONPATH", "testing")
    rb = make_repo(tmp_path / "r", SRC_BASE, SRC_BRANCH)
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=2)
    assert _verdicts(rep) == {"src/pkg/mod.py": "bites", "src/pkg/other.py": "toothless"}


def test_changed_modules_and_roots() -> None:
    tree = ["src/pkg/__init__.py", "src/pkg/sub/__init__.py", "src/pkg/sub/m.py", "flat.py", "src/ns/x.py",
            "tools/run.py", "tests/conftest.py"]
    mods = origin.changed_modules(["src/pkg/sub/m.py", "flat.py", "src/ns/x.py", "tools/run.py",
                                   "tests/conftest.py", "README.md", "src/pkg/__init__.py"], tree)
    assert [(m.path, m.name, m.root) for m in mods] == [
        ("flat.py", "flat", ""), ("src/ns/x.py", "ns.x", "src"), ("src/pkg/__init__.py", "pkg", "src"),
        ("src/pkg/sub/m.py", "pkg.sub.m", "src"), ("tools/run.py", "run", "tools"),
    ]
    scratch = Path("/s")
    assert origin.import_roots(scratch, mods[:1]) == ["/s"]
    assert origin.foreign({"pkg.sub.m": "/s/src/pkg/sub/m.py"}, scratch, mods) is None
    why = origin.foreign({"pkg.sub.m": "/home/me/pkg/src/pkg/sub/m.py"}, scratch, mods)
    assert why == "tests imported pkg.sub.m from /home/me/pkg/src/pkg/sub/m.py, not the scratch (editable install?)"



def test_changed_modules_in_a_namespace_package_at_the_root() -> None:
    # jaraco.functools: jaraco/ has no __init__.py and holds nothing but packages, so it is a PEP 420
    # portion imported from the repo root (`jaraco.functools`), not a root of its own (`functools`, the
    # standard library's). A directory with modules of its own beside its package stays a root (backend/).
    tree = ["jaraco/functools/__init__.py", "jaraco/functools/py.typed", "test_functools.py",
            "backend/manage.py", "backend/app/__init__.py", "backend/app/views.py"]
    mods = origin.changed_modules(["jaraco/functools/__init__.py", "backend/app/views.py"], tree)
    assert [(m.path, m.name, m.root) for m in mods] == [
        ("backend/app/views.py", "app.views", "backend"), ("jaraco/functools/__init__.py", "jaraco.functools", ""),
    ]

def test_env_words_split_like_a_shell() -> None:
    assert origin.split_env_words(["A=1", "B=x=y", "python", "-m", "pytest", "C=3"]) == (
        {"A": "1", "B": "x=y"}, ["python", "-m", "pytest", "C=3"])
    assert origin.split_env_words(["python"]) == ({}, ["python"])
    assert origin.split_env_words(["=x", "python"]) == ({}, ["=x", "python"])
    assert origin.resolve_pythonpath(f"src{os.pathsep}/abs{os.pathsep}", Path("/s")) == ["/s/src", "/abs"]


@pytest.mark.parametrize("cmd", ["PYTHONPATH=src python -m pytest", "FOO=1 PYTHONPATH=src python -m pytest"])
def test_var_prefix_in_test_cmd_via_cli(tmp_path: Path, monkeypatch, cmd: str) -> None:
    from tests.clirun import run_cli

    use_venv_python(monkeypatch)
    base = {k: v for k, v in SRC_BASE.items() if not k.startswith("testing/")}
    branch = {**SRC_BRANCH, "tests/test_mod.py": SRC_BRANCH["tests/test_mod.py"].replace(
        "from helpers import LOW\n", "LOW = 0\n")}
    rb = make_repo(tmp_path / "r", base, branch)
    res = run_cli("bite", "agent/work", "--test-cmd", cmd, "--format", "json", cwd=rb.root, timeout=300)
    assert "not found on PATH" not in res.stderr
    import json

    doc = json.loads(res.stdout)
    assert {h["file"]: h["verdict"] for h in doc["hunks"]} == {"src/pkg/mod.py": "bites",
                                                               "src/pkg/other.py": "toothless"}
    assert res.returncode == 1


def test_pythonpath_ini_and_p_plugin_in_addopts_warm_and_cold_agree(tmp_path: Path, monkeypatch) -> None:
    # The project's own ini puts testing/ on the path and loads a plugin from it with -p.
    use_venv_python(monkeypatch)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    base = {**SRC_BASE, "pytest.ini": "[pytest]\npythonpath = testing\naddopts = -p lowplugin\n",
            "testing/lowplugin.py": "import pytest\n\n\n@pytest.fixture\ndef low():\n    return 0\n"}
    branch = {**SRC_BRANCH, "tests/test_mod.py": (
        "from pkg.mod import clamp\nfrom pkg.other import label\n\n\n"
        "def test_clamp(low):\n    assert clamp(-5, low, 10) == 0\n\n\n"
        "def test_label_runs():\n    label(3)\n")}
    rb = make_repo(tmp_path / "r", base, branch)
    t, d = load(rb.root)
    warm = run_bite(t, d, Settings(), jobs=2)
    cold = run_bite(t, d, Settings(warm_runner=False), jobs=2)
    want = {"src/pkg/mod.py": "bites", "src/pkg/other.py": "toothless"}
    assert _verdicts(warm) == _verdicts(cold) == want, (warm.baseline.reason, cold.baseline.reason)


def test_checkout_roots_are_asked_once_per_python_checkout_and_environment(tmp_path: Path, monkeypatch) -> None:
    # Every `b` press asked the test Python again (~20 ms of a process start each).
    co = tmp_path / "co"
    (co / "src").mkdir(parents=True)
    (co / "lib").mkdir()
    python = _python_with(tmp_path, f"{co / 'src'}\n")
    asked: list[object] = []
    real = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: asked.append(a) or real(*a, **k))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert origin.checkout_roots(python, co) == ("src",)
    assert origin.checkout_roots(python, co) == ("src",) and len(asked) == 1
    monkeypatch.setenv("PYTHONPATH", str(co / "lib"))  # another environment: asked again
    assert origin.checkout_roots(python, co) == ("lib", "src") and len(asked) == 2
