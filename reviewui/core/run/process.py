"""Process-group plumbing shared by the cold runner and the warm server: kill a group, cap output,
read what a run left behind with a cap."""

from __future__ import annotations

import os
import signal
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

from reviewui.core.run.watch import DiskWatch

POLL_SECONDS = 0.05
"""How often a waiting run checks its cancel flag and deadline."""


def kill_group(pgid: int) -> None:
    """SIGKILL every process in group `pgid`; a group that is already gone is fine."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def chunks(fd: int) -> Iterator[bytes]:
    """What `fd` yields until its end (or an error), in reads of up to 64 KiB."""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return
        if not chunk:
            return
        yield chunk


def capped_lines(fd: int, cap: int) -> Iterator[bytes | None]:
    """The lines read from `fd` until its end; a None (and the end) when one passes `cap` bytes."""
    pending = bytearray()
    for chunk in chunks(fd):
        pending += chunk
        while True:
            nl = pending.find(b"\n")
            if nl < 0:
                break
            yield bytes(pending[:nl])
            del pending[: nl + 1]
        if len(pending) > cap:
            yield None
            return


class CappedBuffer:
    """Keeps the first and last `cap` bytes of a stream, counting the rest (`drain` it, then `text()`)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def drain(self, stream: BinaryIO) -> None:
        """Read `stream` to its end, keeping the head and the tail."""
        for chunk in chunks(stream.fileno()):
            self.total += len(chunk)
            room = self.cap - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            if chunk:
                self.tail += chunk
                if len(self.tail) > self.cap:
                    del self.tail[: len(self.tail) - self.cap]

    def text(self) -> str:
        """The kept head and tail, decoded, with a note of how many bytes were dropped between."""
        dropped = self.total - len(self.head) - len(self.tail)
        middle = f"\n[… {dropped} bytes of output dropped …]\n".encode() if dropped > 0 else b""
        return (bytes(self.head) + middle + bytes(self.tail)).decode("utf-8", "replace")


RESULT_FILE_CAP = 16 * 1024 * 1024
"""Bytes reviewui reads at most from a file a run wrote (a reply, a list of modules, a log)."""


def read_run_file(path: str | Path, cap: int = RESULT_FILE_CAP) -> bytes | None:
    """The bytes of a file a sandboxed run wrote, or None when it is missing, not a regular
    file (a FIFO, a symlink: never followed) or larger than `cap` (the run overflowed it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > cap:
            return None
        chunks: list[bytes] = []
        left = cap + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return None if len(data) > cap else data
    except OSError:
        return None
    finally:
        os.close(fd)


def read_run_text(path: str | Path, cap: int = RESULT_FILE_CAP) -> str | None:
    """`read_run_file` decoded as UTF-8 (replacing what is not)."""
    data = read_run_file(path, cap)
    return None if data is None else data.decode("utf-8", "replace")


@dataclass(frozen=True)
class Outcome:
    """How one run ended, as the cold runner and the warm server both report it."""

    returncode: int | None
    """Exit code; None when the run was stopped (timeout, cancel, a limit)."""
    seconds: float
    timed_out: bool
    cancelled: bool
    output: str
    """Head and tail of the output (see CappedBuffer.text)."""
    total: int
    """Bytes of output the run wrote."""
    limit: str | None = None
    """"output limit" / "disk limit" / "file limit" when reviewui stopped the run for passing one."""


class StopCheck:
    """Why a running test must be stopped now: cancelled, past its deadline, or past a limit.

    `check()` is called from the waiting loop every POLL_SECONDS; it answers
    "cancelled", "timeout", "output limit" (more than `output_limit` bytes
    written), or what the disk watch says ("disk limit" / "file limit"), else None.
    """

    def __init__(self, cancel: threading.Event | None, deadline: float | None, buf: CappedBuffer,
                 output_limit: int | None, watch: DiskWatch | None) -> None:
        self.cancel = cancel
        self.deadline = deadline
        self.buf = buf
        self.output_limit = output_limit
        self.watch = watch

    def check(self) -> str | None:
        """The reason to stop the run now, or None."""
        if self.cancel is not None and self.cancel.is_set():
            return "cancelled"
        if self.deadline is not None and time.monotonic() > self.deadline:
            return "timeout"
        if self.output_limit is not None and self.buf.total > self.output_limit:
            return "output limit"
        return self.watch.over() if self.watch is not None else None

    def outcome(self, reason: str | None, returncode: int | None, seconds: float) -> Outcome:
        """The Outcome of a run that ended (`reason` None) or was stopped for `reason`."""
        if reason is None and self.watch is not None:
            reason = self.watch.over(force=True)  # what it wrote in its last moments counts too
            if reason is not None:
                return Outcome(returncode, seconds, False, False, self.buf.text(), self.buf.total, reason)
        limit = reason if reason not in (None, "cancelled", "timeout") else None
        rc = returncode if reason is None else None
        return Outcome(rc, seconds, reason == "timeout", reason == "cancelled", self.buf.text(), self.buf.total,
                       limit)
