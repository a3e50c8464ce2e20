"""Progress of a long test run: tests done of pytest's own collection count, and the time taken.

Every pytest run's origin plugin writes "done total" into the run's own
directory (at most every quarter second, inside/origin_plugin.py); for the
runs a reviewer waits on (the baseline, the truth table's base run) a
`Poller` reads it on a thread and hands each reading to a sink: the app's
status line (a coalescing message) or a line on stderr headless. What the
file says is the branch's own process's word: only ever shown, never used.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from reviewui.core.run.process import read_run_file

FILE = "progress"
"""The file the origin plugin writes in the run's directory."""
VAR = "REVIEWUI_PROGRESS"
"""The variable naming it (held out of the tests' sight like every reviewui variable)."""
PERIOD = 0.5
"""Seconds between readings."""


@dataclass(frozen=True)
class TestsProgress:
    """Where one long run is."""

    __test__ = False  # not a pytest test class, whatever its name

    phase: str
    """What runs: `baseline`, `base run`."""
    done: int
    """Tests finished so far."""
    total: int
    """Tests pytest collected (0 while it is still collecting)."""
    elapsed: float
    """Seconds since the run started."""

    def words(self) -> str:
        """`baseline: 1234/7638 tests, 45s` (or `collecting tests` before pytest has counted them)."""
        where = f"{self.done}/{self.total} tests" if self.total else "collecting tests"
        return f"{self.phase}: {where}, {self.elapsed:.0f}s"


ProgressSink = Callable[[TestsProgress], None]
"""Where readings go (called on the poller's thread)."""


def read(path: Path) -> tuple[int, int] | None:
    """(done, total) from a progress file, None when absent, not a regular file of at most 64 bytes (the
    run may put a FIFO or a link there: never followed, never waited on), or not two small numbers."""
    data = read_run_file(path, 64)
    if data is None:
        return None
    words = data.split()
    if len(words) != 2 or not all(w.isdigit() and len(w) < 10 for w in words):
        return None
    done, total = int(words[0]), int(words[1])
    return (min(done, total), total)


class Poller:
    """Reads a run's progress file every PERIOD seconds until stopped, passing each reading on."""

    def __init__(self, path: Path, phase: str, sink: ProgressSink) -> None:
        self.path, self.phase, self.sink = path, phase, sink
        self._stop = threading.Event()
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name=f"progress {phase}", daemon=True)

    def start(self) -> None:
        """Start reading (the run is about to start)."""
        self._start = time.monotonic()
        self._thread.start()

    def stop(self) -> None:
        """Stop reading, after one last reading (the run ended)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2 * PERIOD)
        self._emit()

    def _loop(self) -> None:
        while not self._stop.wait(PERIOD):
            self._emit()

    def _emit(self) -> None:
        got = read(self.path) or (0, 0)
        try:
            self.sink(TestsProgress(self.phase, got[0], got[1], time.monotonic() - self._start))
        except Exception:  # noqa: BLE001 - a sink's bug must not take the run down
            pass
