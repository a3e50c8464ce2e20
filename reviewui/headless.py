"""The headless twins of the UI's actions: bite, fixtures, transcript, probe,
verdict, log, notes and check. Each handler takes parsed arguments, calls
the core, prints text or JSON, and returns the exit code.
"""

from __future__ import annotations

import argparse
from typing import Callable

HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {}
