"""How a review runs tests (RunOptions): from the command line's flags and the config, read by the session."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class RunOptions:
    """How tests are run for bite-checks and probes (from flags and config)."""

    test_cmd: str | None = None
    """Overrides Settings.test_command when given."""
    all_tests: bool = False
    """Run the whole suite instead of the branch's changed test files."""
    jobs: int | None = None
    """Parallel workers for sweeps; None means the number of cores."""
    timeout: float | None = None
    """Per-run time limit in seconds; None means derived from the baseline."""
    fresh: bool = False
    """Rerun everything: stored evidence is neither shown as current nor reused (`--fresh`)."""
    engine: str | None = None
    """What carries out bite sweeps (`--engine local|ray`); None: the `engine` setting."""
    ray_address: str | None = None
    """The Ray cluster of the ray engine (`--ray-address`); None: the `ray-address` setting."""
