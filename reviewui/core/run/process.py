"""Process-group plumbing shared by the cold runner and the warm server: kill a group, cap output."""

from __future__ import annotations

import os
import signal
from typing import BinaryIO

POLL_SECONDS = 0.05
"""How often a waiting run checks its cancel flag and deadline."""


def kill_group(pgid: int) -> None:
    """SIGKILL every process in group `pgid`; a group that is already gone is fine."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class CappedBuffer:
    """Keeps the first and last `cap` bytes of a stream, counting the rest (`drain` it, then `text()`)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def drain(self, stream: BinaryIO) -> None:
        """Read `stream` to its end, keeping the head and the tail."""
        fd = stream.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
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
