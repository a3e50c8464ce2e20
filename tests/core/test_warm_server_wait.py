"""The warm server waits for its runs on pidfds: each run's end is reported, no handle is kept or handed on.

The server is driven directly here (its own protocol, no sandbox), with and
without `os.pidfd_open` (an old kernel's Python polls instead).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from reviewui.core.run.warm_runner import SERVER_SOURCE

# A run that holds any pidfd fails: runs must not see the handles of other runs.
NO_PIDFD_TEST = '''import os, time


def test_holds_no_pidfd():
    time.sleep(0.3)
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            held.append(os.readlink("/proc/self/fd/" + fd))
        except OSError:
            pass
    assert not [h for h in held if "pidfd" in h], held
'''


def _pidfds(pid: int) -> int:
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += "pidfd" in os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            pass
    return count


def _server(tmp_path: Path, pidfd: bool) -> subprocess.Popen[str]:
    source = tmp_path / "warm_server.py"
    source.write_text(SERVER_SOURCE)
    # As reviewui starts it, but with os.pidfd_open gone when asked (an old kernel's Python).
    code = ("" if pidfd else "import os\ndel os.pidfd_open\n") + (
        f"exec(compile(open({str(source)!r}).read(), 'warm_server', 'exec'), {{'__name__': '__main__'}})")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    assert proc.stdout is not None
    ready = json.loads(proc.stdout.readline())
    # issue 29: the ready line also names this pytest and the private names it moved (none here)
    assert ready == {"ready": True, "pytest": ready.get("pytest"), "moved": []} and ready["pytest"]
    return proc


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polling"])
def test_overlapping_runs_each_get_their_end_reported_and_no_pidfd_is_left(tmp_path: Path, pidfd: bool) -> None:
    if pidfd and not hasattr(os, "pidfd_open"):
        pytest.fail("this Python has no os.pidfd_open: the pidfd path cannot be checked here")
    project = tmp_path / "p"
    project.mkdir()
    (project / "test_fds.py").write_text(NO_PIDFD_TEST)
    proc = _server(tmp_path, pidfd)
    assert proc.stdin is not None and proc.stdout is not None
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    watchdog = threading.Timer(30, proc.kill)  # a run never reported must fail the test, not hang it
    watchdog.start()
    try:
        for rid in (1, 2, 3):  # three at once: each later fork is made while earlier runs are alive
            (tmp_path / f"out{rid}").touch()
            request = {"id": rid, "cwd": str(project), "env": env, "output": str(tmp_path / f"out{rid}"),
                       "args": ["-q", "-p", "no:cacheprovider", "test_fds.py"]}
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
        exits: dict[int, int] = {}
        start = time.monotonic()
        while len(exits) < 3:
            reply = json.loads(proc.stdout.readline())
            if "exit" in reply:
                exits[reply["id"]] = reply["exit"]
        assert time.monotonic() - start < 30
        outputs = {rid: (tmp_path / f"out{rid}").read_text() for rid in exits}
        assert exits == {1: 0, 2: 0, 3: 0}, outputs  # every run ended on its own, holding no pidfd
        assert _pidfds(proc.pid) == 0  # the server closed each handle once its run was reported
    finally:
        watchdog.cancel()
        proc.stdin.close()
        proc.wait(timeout=10)
