"""Limits that fit the environment, and a clean room that is refused when it cannot be had.

A CI runner or a container hands reviewui an inherited hard limit it cannot
raise: runs must still be graded, with the clamp said once. A sandbox whose
processes keep a privilege, or a limit that cannot be set, is refused with one
line and exit 3, never reported as a test failure.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.run import limits as limits_mod
from tests.core.bite.helpers import use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
PY = sys.executable
HARD_AS = 4_000_000_000


def _repo(root: Path):
    test = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    return make_repo(root, {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n"},
                     {"pkg/calc.py": "def add(a, b):\n    return a + b\n", "tests/test_calc.py": test})


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_STATE_HOME": str(tmp_path / "state")}
    env.update(extra)
    return env


@pytest.mark.parametrize("warm", ["true", "false"])
def test_bite_is_graded_under_an_inherited_hard_memory_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             warm: str) -> None:
    use_venv_python(monkeypatch)
    rb = _repo(tmp_path / "repo")
    (tmp_path / "cfg" / "reviewui").mkdir(parents=True)
    (tmp_path / "cfg" / "reviewui" / "config.toml").write_text(f'memory-limit = "12G"\nwarm-runner = {warm}\n')
    prlimit = shutil.which("prlimit")
    assert prlimit, "util-linux's prlimit is part of the test environment"
    proc = subprocess.run([prlimit, f"--as={HARD_AS}:{HARD_AS}", "--", PY, "-m", "reviewui", "bite", "agent/work",
                           "--format", "json"], cwd=rb.root, env=_env(tmp_path), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    report = json.loads(proc.stdout)
    assert report["baseline"]["status"] == "green"
    assert [h["verdict"] for h in report["hunks"] if h["verdict"] != "not-code"] == ["bites"]
    notes = [ln for ln in proc.stderr.splitlines() if "inherited hard limit" in ln]
    assert len(notes) == 1, proc.stderr  # said once
    assert "memory-limit 12G" in notes[0]


def test_every_limit_is_clamped_to_its_inherited_hard_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    hard = {resource.RLIMIT_AS: 3 << 30, resource.RLIMIT_FSIZE: 1 << 30, resource.RLIMIT_NPROC: 100}
    monkeypatch.setattr(limits_mod.resource, "getrlimit", lambda which: (hard.get(which, -1), hard.get(which, -1)))
    monkeypatch.setenv("REVIEWUI_MEMORY_LIMIT", "8G")
    monkeypatch.setenv("REVIEWUI_DISK_LIMIT", "2G")
    monkeypatch.setenv("REVIEWUI_PROCESS_LIMIT", "512")
    limits_mod._fitted.cache_clear()
    try:
        fitted = limits_mod.fitted()
    finally:
        limits_mod._fitted.cache_clear()
    assert (fitted.limits.memory, fitted.limits.disk, fitted.limits.processes) == (3 << 30, 1 << 30, 100)
    assert [n.split()[0] for n in fitted.notes] == ["memory-limit", "disk-limit", "process-limit"]


def test_limits_under_the_inherited_ones_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits_mod.resource, "getrlimit", lambda which: (8 << 30, 8 << 30))
    monkeypatch.setenv("REVIEWUI_MEMORY_LIMIT", "1G")
    limits_mod._fitted.cache_clear()
    try:
        fitted = limits_mod.fitted()
    finally:
        limits_mod._fitted.cache_clear()
    assert fitted.limits.memory == 1 << 30 and "memory-limit" not in " ".join(fitted.notes)


def _fake(bin_dir: Path, name: str, script: str) -> None:
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / name
    path.write_text(script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _bite(rb, tmp_path: Path, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    env = _env(tmp_path, PATH=f"{bin_dir}{os.pathsep}{Path(PY).parent}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run([PY, "-m", "reviewui", "bite", "agent/work"], cwd=rb.root, env=env, capture_output=True,
                          text=True, timeout=300)


def test_a_sandbox_that_keeps_privileges_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bwrap that leaves the run its capabilities (as root) or uid 0 (as a user) is never used."""
    from reviewui.core.run.sandbox import bwrap_path

    real = bwrap_path()
    assert real
    # Drop what reviewui asked for: the capability drop, and the unprivileged uid. The system's Python
    # runs it: as root bwrap starts as the run's unprivileged uid, which may not reach this venv's base.
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else PY
    _fake(tmp_path / "bin", "bwrap", f'''#!{python}
import os, sys
args, out, skip = sys.argv[1:], [], 0
if args[:1] == ["--args"]:  # reviewui hands bwrap its options in a file on that fd (bwrap_start.OPTIONS_LINE)
    with os.fdopen(int(args[1]), "rb") as f:
        args = [o.decode() for o in f.read().split(b"\\0")[:-1]] + args[2:]
for n, a in enumerate(args):
    if skip:
        skip -= 1
        continue
    if a == "--":
        out += args[n:]
        break
    if a in ("--cap-drop", "--uid", "--gid"):
        skip = 1
        continue
    out.append(a)
os.execv({real!r}, [{real!r}, "--uid", "0", "--gid", "0", *out])
''')
    rb = _repo(tmp_path / "repo")
    proc = _bite(rb, tmp_path, tmp_path / "bin")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "keeps privileges" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_limit_that_cannot_be_set_is_said_as_that(tmp_path: Path) -> None:
    _fake(tmp_path / "bin", "prlimit", "#!/bin/sh\necho 'prlimit: failed to set the AS resource limit: "
                                       "Operation not permitted' >&2\nexit 1\n")
    rb = _repo(tmp_path / "repo")
    proc = _bite(rb, tmp_path, tmp_path / "bin")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "memory-limit" in proc.stderr and "AS limit" in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
