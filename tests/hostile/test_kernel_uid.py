"""Nobody inside, as root (issue 37): a run's processes have an unprivileged kernel uid.

Inside its user namespace a run is uid 65534 (or the user's own uid); what the kernel checks
on the host is the uid that maps to. Read from the host's /proc/PID/status of a sandboxed
process: never 0, as root too (the differential: the same read of a host process as root shows
Uid 0). And a root-owned 0600 file the run can see (a `sandbox-paths` entry) stays unreadable
inside, while root reads it outside. As an ordinary user the run's kernel uid is the user's own.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from reviewui.core.run.command_types import host_program
from reviewui.core.run.runner import run_tests
from reviewui.core.run.warm_runner import WarmPytest

pytestmark = pytest.mark.slow

PY = sys.executable


def _uids(pid: int | str) -> list[int]:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return [int(x) for x in line.split()[1:]]
    raise AssertionError(f"no Uid line for {pid}")


def _ours(pid: str) -> bool:
    """True when `pid` descends from this process (other sessions' runs are not this test's)."""
    me = str(os.getpid())
    for _ in range(64):
        try:
            ppid = next(ln.split()[1] for ln in Path(f"/proc/{pid}/status").read_text().splitlines()
                        if ln.startswith("PPid:"))
        except (OSError, StopIteration):
            return False
        if ppid == me:
            return True
        if ppid in ("0", "1"):
            return False
        pid = ppid
    return False


def _in_a_run(pid: str) -> bool:
    """True when `pid` lives in a PID namespace below the host's: a process of a run (reviewui's own
    steps in front of the sandbox, which name the same command, live in the host's)."""
    status = Path(f"/proc/{pid}/status").read_text()
    nspid = next((ln.split()[1:] for ln in status.splitlines() if ln.startswith("NSpid:")), [])
    return len(nspid) > 1


def _watch(marks: tuple[bytes, ...], found: dict[str, list[int]], stop: threading.Event) -> None:
    """Find this test's run processes on the host (a mark in their command line: the test file's
    tag, cold; the warm server's own, whose forks share its command line); read their Uid."""
    while not stop.is_set():
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or pid == str(os.getpid()):
                continue
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                if any(m in cmdline for m in marks) and _ours(pid) and _in_a_run(pid):
                    found[pid] = _uids(pid)
            except (OSError, AssertionError):
                continue
        time.sleep(0.02)


def _secret(tmp_path: Path) -> Path:
    """A root-owned 0600 file in a dir the run can see (as root); the user's own file otherwise."""
    visible = tmp_path / "visible"
    visible.mkdir()
    visible.chmod(0o755)
    secret = visible / "secret"
    secret.write_text("CANARY")
    secret.chmod(0o600)
    return secret


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_runs_kernel_uid_is_never_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: bool) -> None:
    root = os.geteuid() == 0
    assert _uids("self")[0] == os.geteuid()  # the differential: a host process shows its own uid, 0 as root
    secret = _secret(tmp_path)
    assert secret.read_text() == "CANARY"  # readable outside, by its owner
    cfg = tmp_path / "cfg"
    (cfg / "reviewui").mkdir(parents=True)
    (cfg / "reviewui" / "config.toml").write_text(f'sandbox-paths = ["{secret.parent}"]\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    tag = f"uid{os.getpid()}{int(warm)}"
    tree = tmp_path / "slot" / "tree"
    tree.mkdir(parents=True)
    (tree / f"test_{tag}.py").write_text(
        "import os, time\n\n\ndef test_sleep():\n"
        f"    try:\n        open({str(secret)!r}).read()\n        print('READ-SECRET')\n"
        "    except PermissionError:\n        print('NO-SECRET')\n"
        "    time.sleep(2)\n")
    python = host_program(PY)
    assert python is not None
    server = WarmPytest(python) if warm else None
    found: dict[str, list[int]] = {}
    stop = threading.Event()
    marks = (b"--plugin-cache",) if warm else (tag.encode(),)
    watcher = threading.Thread(target=_watch, args=(marks, found, stop), daemon=True)
    watcher.start()
    try:
        run = run_tests(tree, [PY, "-m", "pytest", "-s", "-p", "no:randomly"], [f"test_{tag}.py"], 120, warm=server)
    finally:
        stop.set()
        watcher.join()
        if server is not None:
            server.close()
    assert run.returncode == 0 and run.warm == warm, run.output[-1500:]
    assert found, "the run's processes were not seen from the host"
    for pid, uids in found.items():
        assert 0 not in uids, (pid, uids)
        if not root:
            assert set(uids) == {os.geteuid()}, (pid, uids)
    if root:
        assert "NO-SECRET" in run.output, run.output[-1500:]
    else:
        assert "READ-SECRET" in run.output, run.output[-1500:]  # the user's own file: the same uid
