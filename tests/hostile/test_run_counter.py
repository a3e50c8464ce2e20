"""A test that counts its own runs (issue 37): it passes its first three and fails every later one.

Kept where state survives a run today (/dev/shm: shared by every fork of a
batch session and of a slot's warm server; the sweep's own directory, bound
into cold runs), such a counter makes wrong code "bite" in every hunk: the
baseline, the instrument check and the one control that used to run first are
its three free runs. The controls now run among the graded ones, at random,
one always in the later half of each session: one of them fails, and the
sweep is refused (exit 3, the test named), warm and cold, with and without
guards. Differential: the same counter, kept by a plain Python process twice
running the module outside the sandbox, does count (the probe works).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from reviewui.core.bite.engine import UntrustedCommand, run_bite
from reviewui.core.config import Settings
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
N = 8
COUNTER = '''import os

def _places():
    """Every writable place that may outlive this run: /dev/shm, and the mounts bound read-write
    at a host path (the sweep dir of a cold run)."""
    found = [os.environ.get("FORGE_SHM", "/dev/shm")]
    try:
        with open("/proc/self/mountinfo") as f:
            for row in f:
                parts = row.split()
                if len(parts) > 5 and parts[5].startswith("rw") and "reviewui-bite" in parts[4]:
                    found.append(parts[4])
    except OSError:
        pass
    return found


def _count():
    """Runs so far, kept in every writable place that may outlive this run."""
    seen = 0
    for place in _places():
        try:
            with open(os.path.join(place, "reviewui-forge-count")) as f:
                seen = max(seen, int(f.read() or 0))
        except (OSError, ValueError):
            pass
    seen += 1
    for place in _places():
        try:
            with open(os.path.join(place, "reviewui-forge-count"), "w") as f:
                f.write(str(seen))
        except OSError:
            pass
    return seen


RUN = _count()  # once per import: once per run, and once per fork of a batch session
'''


def _tests() -> str:
    body = "".join(f"\n\ndef test_f{i}():\n    f{i}(2)\n    assert RUN <= 3, 'a later run'\n" for i in range(N))
    return COUNTER + "".join(f"from pkg.m{i} import f{i}\n" for i in range(N)) + body


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    # The branch's code is wrong (every function returns 42); the tests assert nothing about it.
    base = {"pkg/__init__.py": "", **{f"pkg/m{i}.py": f"def f{i}(x):\n    return x\n" for i in range(N)}}
    branch = {"tests/__init__.py": "", "tests/test_forge.py": _tests(),
              **{f"pkg/m{i}.py": f"def f{i}(x):\n    y = x\n    return 42\n" for i in range(N)}}
    yield make_repo(tmp_path_factory.mktemp("forge") / "repo", base, branch).root


def test_the_counter_counts_outside_the_sandbox(tmp_path: Path) -> None:
    """The probe works: imported by two processes in turn, it sees 1, then 2 (its place survives)."""
    (tmp_path / "counter.py").write_text(COUNTER, encoding="utf-8")
    env = {**os.environ, "FORGE_SHM": str(tmp_path), "PYTHONPATH": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", "import counter; print(counter.RUN)"], env=env,
                           capture_output=True, text=True, check=True).stdout.strip() for _ in range(2)]
    assert runs == ["1", "2"]


@pytest.mark.parametrize(("warm", "guards", "jobs"), [(True, False, 2), (False, False, 1), (True, True, 2)],
                         ids=["warm", "cold", "guards"])
def test_a_run_counter_is_refused_by_the_interleaved_controls(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                              warm: bool, guards: bool, jobs: int) -> None:
    use_venv_python(monkeypatch)
    t, d = load(repo)
    with pytest.raises(UntrustedCommand, match=r"tests/test_forge.py::test_f\d.*can tell a (revert|guard) run"):
        rep = run_bite(t, d, Settings(warm_runner=warm), jobs=jobs, guards=guards, timeout=30)
        pytest.fail(f"graded: {[(r.file, r.verdict) for r in rep.results]}")


def test_the_refusal_is_exit_3_on_the_command_line(repo: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "PATH": str(Path(sys.executable).parent) + os.pathsep
           + os.environ.get("PATH", "")}
    proc = subprocess.run([sys.executable, "-m", "reviewui", "bite", "agent/work"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "tests/test_forge.py::test_f" in proc.stderr and "not trusted for bites" in proc.stderr
