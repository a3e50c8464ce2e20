"""The claims rerun never runs a program the agent named (issue 37).

A transcript's test command names a program of the branch: relative (`venv/bin/python -m pytest`,
with the branch checked out where reviewui runs), by the scratch slot's predictable absolute path,
or through a `PATH=` prefix. Each program would write a marker file on the host. The marker never
appears, and the claim is `unverifiable`. Differential: the same program, run outside afterwards,
does write the marker (so a wrong path would not pass silently).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.run.scratch_slots import scratch_root, slot_base
from tests.clirun import ROOT
from tests.gitrepo import RepoBuilder, make_repo

pytestmark = pytest.mark.slow

TEST = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def _script(marker: Path, run: str) -> str:
    # Runs on the host only if reviewui runs it there: the marker is a host path no sandbox shows.
    return f"#!/bin/sh\necho ran >> {marker}\nexec {run} \"$@\"\n"


@pytest.fixture
def branch(tmp_path: Path):
    marker = tmp_path / "host-marker"
    python = str(Path(sys.executable))
    rb = make_repo(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n"},
                   {"pkg/calc.py": "def add(a, b):\n    return a + b\n", "tests/test_calc.py": TEST,
                    "venv/pyvenv.cfg": "home = /usr/bin\n",
                    "venv/bin/python": _script(marker, python),
                    "venv/bin/pytest": _script(marker, python + " -m pytest")})
    rb.git("checkout", "-q", "agent/work")  # the branch checked out where reviewui runs (`reviewui`, CI)
    rb.git("update-index", "--chmod=+x", "venv/bin/python", "venv/bin/pytest")
    rb.git("commit", "-q", "--amend", "--no-edit")
    rb.git("checkout", "-q", "--", ".")
    return rb, marker


def _transcript(path: Path, command: str) -> Path:
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}
    path.write_text(json.dumps({"messages": [
        {"role": "user", "content": "fix add"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "1 passed in 0.01s\n"},
        {"role": "assistant", "content": "Fixed. 1 passed."}]}))
    return path


def _slot_tree(repo: Path) -> Path:
    """Where the rerun's scratch holds the head's tree (the agent can predict it)."""
    return slot_base(scratch_root(repo)) / "0" / "tree"


@pytest.mark.parametrize("form", ["relative", "slot", "path"])
def test_the_agents_program_never_runs_on_the_host(branch, tmp_path: Path, form: str) -> None:
    rb, marker = branch
    slot = _slot_tree(rb.root)
    command = {"relative": "venv/bin/python -m pytest -q",
               "slot": f"{slot}/venv/bin/python -m pytest -q",
               "path": f"PATH={slot}/venv/bin:/usr/bin:/bin pytest -q"}[form]
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin{os.pathsep}/bin"}
    proc = subprocess.run([sys.executable, "-m", "reviewui", "claims", "agent/work", "--transcript",
                           str(_transcript(tmp_path / "t.json", command)), "--format", "json"],
                          cwd=rb.root, env=env, capture_output=True, text=True, timeout=300)
    assert not marker.exists(), "the agent's program ran on the host"
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checks = json.loads(proc.stdout)["claims"]
    assert checks[0]["kind"] == "run" and checks[0]["outcome"] == "unverifiable", checks
    # The probe works: the same program, run outside, writes the marker.
    program = {"relative": rb.root / "venv/bin/python", "slot": slot / "venv/bin/python",
               "path": slot / "venv/bin/pytest"}[form]
    if form != "relative":  # the slot is emptied when the rerun ends: the same file put back there
        if not program.exists():
            program.parent.mkdir(parents=True, exist_ok=True)
            program.write_text((rb.root / "venv" / "bin" / program.name).read_text())
            program.chmod(0o755)
    subprocess.run([str(program), "--version"], capture_output=True, timeout=60)
    assert marker.exists()


def test_a_trusted_command_naming_a_tree_file_runs_it_only_inside(tmp_path: Path) -> None:
    """The base's config names `venv/bin/python -m pytest`, a file of the tree (the branch may change
    it): no host helper (the interpreter's layout, the coverage probe, the import roots) starts it on
    the host; the bite runs it in the sandbox only. Differential: run outside, it writes the marker."""
    marker = tmp_path / "host-marker"
    python = str(Path(sys.executable))
    venv = {"venv/pyvenv.cfg": "home = /usr/bin\n", "venv/bin/python": _script(marker, python)}
    rb = RepoBuilder(tmp_path / "repo")
    rb.write({"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n",
              ".reviewui.toml": 'test-command = "venv/bin/python -m pytest"\n', **venv})
    (rb.root / "venv" / "bin" / "python").chmod(0o755)
    rb.commit({}, "base: its trusted config names a file of the tree")
    rb.branch("agent/work")
    rb.commit({"pkg/calc.py": "def add(a, b):\n    return a + b\n", "tests/test_calc.py": TEST})
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin{os.pathsep}/bin"}
    for command in (["bite", "agent/work", "--format", "json"], ["check", "agent/work", "--bite", "--format", "json"]):
        proc = subprocess.run([sys.executable, "-m", "reviewui", *command], cwd=rb.root, env=env,
                              capture_output=True, text=True, timeout=300)
        assert not marker.exists(), f"{command[0]}: the tree's program ran on the host"
        assert proc.returncode in (0, 1, 3), proc.stdout[-1500:] + proc.stderr
    subprocess.run([str(rb.root / "venv" / "bin" / "python"), "-c", "pass"], capture_output=True, timeout=60)
    assert marker.exists()  # the probe works
