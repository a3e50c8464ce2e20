"""The demo bites out of the box: its samples' tests run with reviewui's own Python (it has pytest)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from reviewui.core.bite.engine import run_bite
from reviewui.core.config import resolve_settings
from reviewui.core.diff import load_diff
from reviewui.core.target import resolve_target
from reviewui.demo import build_sample


def test_demo_bites_when_the_python_on_path_has_no_pytest(tmp_path: Path, monkeypatch) -> None:
    # A PATH as after `pip install .` into a venv that is not activated: `python` there is a
    # bare interpreter without pytest; only git and that python are reachable.
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git"))
    (bin_dir / "python").symlink_to(bare / "bin" / "python")
    built = build_sample("01-trim-reasoning", tmp_path / "demo")
    monkeypatch.setenv("PATH", str(bin_dir))
    settings = resolve_settings(built.repo_dir, "agent/trim-reasoning", "fix/trim-reasoning")
    assert settings.test_command.split()[0] == sys.executable
    t = resolve_target(built.repo_dir, "fix/trim-reasoning", base="agent/trim-reasoning")
    rep = run_bite(t, load_diff(str(built.repo_dir), t.base, t.head), settings, jobs=1)
    assert rep.baseline.status == "green", rep.baseline.reason
    assert [r.verdict for r in rep.results] == ["bites"]
    assert "git" in os.listdir(bin_dir)
