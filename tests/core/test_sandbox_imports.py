"""The sandbox puts back what the test Python imports from hidden places, and nothing of the reviewer's repo."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

from reviewui.core.run import sandbox
from reviewui.core.run.runner import run_tests
from tests.project_python import pytest_command

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


def test_a_run_knows_it_is_inside_and_a_nested_sandbox_reuses_its_proc(tmp_path: Path, monkeypatch) -> None:
    # reviewui bite-checking its own tests: the inner bwrap cannot mount a new /proc under the
    # outer one, so inside a reviewui run (and only there) it binds the outer sandbox's /proc.
    (tmp_path / "test_env.py").write_text(
        "import os\n\n\ndef test_marked():\n    assert os.environ.get('REVIEWUI_IN_SANDBOX') == '1'\n")
    res = run_tests(tmp_path, pytest_command(), ["test_env.py"], 120)
    assert res.returncode == 0, res.output
    box = sandbox.Box(writable=(tmp_path,), chdir=tmp_path)
    monkeypatch.delenv(sandbox.INSIDE_VAR, raising=False)
    def binds_proc(argv: list[str]) -> bool:
        return any(argv[i:i + 3] == ["--ro-bind", "/proc", "/proc"] for i in range(len(argv)))

    top = sandbox.shown(sandbox.wrap(["true"], box))
    assert "--proc" in top and not binds_proc(top)
    monkeypatch.setenv(sandbox.INSIDE_VAR, "1")
    nested = sandbox.shown(sandbox.wrap(["true"], box))
    assert "--proc" not in nested and binds_proc(nested)


def test_a_pth_line_naming_a_hidden_dir_itself_does_not_unhide_it(tmp_path: Path) -> None:
    # A `.pth` line `/tmp` (or the home) must not put the whole hidden dir back.
    secret = tmp_path / "secret.txt"
    secret.write_text("reviewer's file")
    python = _python_with_pth(tmp_path, [Path("/tmp")])
    work = tmp_path / "work"
    work.mkdir()
    (work / "test_z.py").write_text(
        f"import os\n\n\ndef test_z():\n    assert not os.path.exists({str(secret)!r})\n")
    res = run_tests(work, f"{python} -m pytest", ["test_z.py"], 120)
    assert res.returncode == 0, res.output
