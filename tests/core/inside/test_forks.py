"""How a batch child waits for each fork (inside/forks.py): at once when it ends, killed with its group when it hangs."""

from __future__ import annotations

import os
import time

import pytest

from reviewui.core.inside import forks


def _fork(seconds: float) -> int:
    pid = os.fork()
    if pid == 0:  # the guard's fork: its own process group, as _child makes it
        os.setpgid(0, 0)
        time.sleep(seconds)
        os._exit(0)
    return pid


def _open_pidfds() -> int:
    """How many pidfds this process holds: counting every fd was flaky, as other fds close on their own."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += "pidfd" in os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own fd, closed by now
            pass
    return count


@pytest.mark.parametrize("how", ["pidfd", "polling", "pidfd-refused"])
def test_a_fork_that_ends_is_seen_at_once_and_one_that_hangs_is_killed(how: str, monkeypatch) -> None:
    if how == "polling":
        monkeypatch.delattr(os, "pidfd_open", raising=False)  # an old kernel's Python
    elif not hasattr(os, "pidfd_open"):
        pytest.fail("this Python has no os.pidfd_open: the pidfd path cannot be checked here")
    elif how == "pidfd-refused":  # the call exists but the kernel says no: polled instead
        monkeypatch.setattr(os, "pidfd_open", lambda pid: (_ for _ in ()).throw(OSError("ENOSYS")))
    else:  # with a pidfd the wait never falls back to polling
        monkeypatch.setattr(forks, "_until_polled", lambda pid, deadline: pytest.fail("polled"))
    fds = _open_pidfds()
    pid = _fork(0.05)
    start = time.monotonic()
    status = forks.wait(pid, 10.0)
    assert status is not None and os.waitstatus_to_exitcode(status) == 0
    assert time.monotonic() - start < 2.0  # seen when it ended, not at the time limit
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left behind

    pid = _fork(60)
    start = time.monotonic()
    assert forks.wait(pid, 0.3) is None
    assert time.monotonic() - start < 5.0
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # killed and reaped
    assert _open_pidfds() == fds  # no pidfd left open
