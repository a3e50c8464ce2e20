"""The sandbox puts back what the test Python imports from hidden places, and nothing of the reviewer's repo."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

from reviewui.core.run import sandbox
from reviewui.core.run.runner import run_tests

SITE = sysconfig.get_paths()["purelib"]


def _python_with_pth(tmp: Path, lines: list[Path]) -> str:
    """A venv under the (hidden) tmp dir whose site-packages .pth adds `lines` and this venv's packages."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "extra.pth").write_text("".join(f"{p}\n" for p in lines), encoding="utf-8")
    (site / "zz_dev.pth").write_text(f"{SITE}\n", encoding="utf-8")
    return str(venv / "bin" / "python")


def test_a_pth_dir_under_tmp_is_importable_inside(tmp_path: Path) -> None:
    # As a user site in the home or a .pth into another venv: the tests need those packages.
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "extra_mod.py").write_text("VALUE = 42\n")
    python = _python_with_pth(tmp_path, [extra])
    work = tmp_path / "work"
    work.mkdir()
    (work / "test_x.py").write_text("import extra_mod\n\n\ndef test_x():\n    assert extra_mod.VALUE == 42\n")
    res = run_tests(work, f"{python} -m pytest", ["test_x.py"], 120)
    assert res.sandbox == "bwrap"
    assert res.returncode == 0, res.output


def test_a_pth_dir_inside_the_reviewers_repo_stays_hidden(tmp_path: Path) -> None:
    # An editable install of the reviewer's checkout: its source must not be put back
    # (the scratch stands in for it), and nothing else of the repo with it.
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "checkout_mod.py").write_text("VALUE = 1\n")
    sandbox.hide(repo)
    python = _python_with_pth(tmp_path, [repo / "src"])
    work = tmp_path / "work"
    work.mkdir()
    (work / "test_y.py").write_text(
        "import importlib.util\n\n\ndef test_y():\n    assert importlib.util.find_spec('checkout_mod') is None\n")
    res = run_tests(work, f"{python} -m pytest", ["test_y.py"], 120)
    assert res.returncode == 0, res.output
