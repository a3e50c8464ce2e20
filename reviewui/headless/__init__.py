"""The headless twins of the UI's actions: bite, fixtures, transcript, probe,
verdict, log, notes and check. Each handler takes parsed arguments, calls
the core, prints text or JSON, and returns the exit code; importing this
package registers them all in HANDLERS (registry.py).
"""

from __future__ import annotations

from reviewui.headless import inputs, queue, sweeps, verdicts
from reviewui.headless.queue import cmd_queue
from reviewui.headless.registry import HANDLERS

__all__ = ["HANDLERS", "cmd_queue", "inputs", "queue", "sweeps", "verdicts"]
