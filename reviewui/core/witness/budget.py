"""The budget of one toothless guard's witness search (`witness-budget` in the config).

Its own module, apart from the witness record (model.py): the settings hold a budget, and
every command reads the settings, the review app's first screen included, which has no use
for the bite reports' witness records (each dataclass costs its import a millisecond).
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_SECONDS = 2.0
DEFAULT_CALLS = 200


@dataclass(frozen=True)
class Budget:
    """What one guard's search may spend (`witness-budget`)."""

    seconds: float = DEFAULT_SECONDS
    """Wall-clock seconds of calls (the search's own fork start-up included)."""
    calls: int = DEFAULT_CALLS
    """Calls of the function, head and reverted together."""
