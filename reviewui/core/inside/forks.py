"""Fork-wait-kill for the batch children (copied into a run as `reviewui_forks`; see README.md here).

A batch session forks once per edit; the parent waits for the fork with a
deadline and kills the fork's whole process group when it is over. Woken
the moment the fork exits (a pidfd), since most forks end in milliseconds
and a polling interval would add its own wait to every one of them.
Standard library only.
"""

from __future__ import annotations

import os
import select
import signal
import time

MODULE = "reviewui_forks"
"""The name a run imports this file under (copied beside the child plugin that uses it)."""


def wait(pid: int, timeout: float) -> int | None:
    """The fork's wait status, or None when it outlived `timeout` (its process group is then killed)."""
    deadline = time.monotonic() + timeout
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # an old kernel or Python: poll instead
        fd = -1
    try:
        status = _until_readable(pid, fd, deadline) if fd >= 0 else _until_polled(pid, deadline)
    finally:
        if fd >= 0:
            os.close(fd)
    if status is not None:
        return status
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    os.waitpid(pid, 0)
    return None


def _until_readable(pid: int, fd: int, deadline: float) -> int | None:
    """The wait status once the pidfd says the fork ended, None at the deadline."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        select.select([fd], [], [], left)


def _until_polled(pid: int, deadline: float) -> int | None:
    """As _until_readable, without a pidfd: polled, gently for a fork that hangs."""
    pause = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.02)
