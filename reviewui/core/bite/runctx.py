"""One sweep's way of running the test command in a scratch: same env, roots and plugin every run.

Every run of a sweep (baseline, instrument check, each revert; warm or cold)
goes through `RunContext.run`, so all of them see the same thing: the
user's `VAR=value` words, the scratch's import roots first, the origin
plugin, and relative PYTHONPATH entries resolved against the scratch.
The result says whether a changed module came from outside the scratch.
"""

from __future__ import annotations

import itertools
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from reviewui.core.bite import origin
from reviewui.core.config import Settings
from reviewui.core.run.runner import RunResult, is_pytest_command, run_tests
from reviewui.core.run.warm_runner import WarmPytest


@dataclass(frozen=True)
class Observation:
    """A run and what the origin plugin saw in it."""

    run: RunResult
    """The run itself."""
    observed: origin.Observed
    """Module origins and data-file opens."""
    foreign: str | None
    """Why the run does not count (a changed module came from elsewhere), else None."""


@dataclass
class RunContext:
    """How every run of one sweep is made (see the module docstring)."""

    argv: list[str]
    """The command without its leading `VAR=value` words."""
    user_env: dict[str, str]
    """The `VAR=value` words given before the command."""
    modules: list[origin.ChangedModule]
    """The changed Python modules whose origin is checked."""
    settings: Settings
    """Sandbox settings (env allow-list, network)."""
    work: Path
    """A private directory for the plugin and its reports (outside every scratch)."""
    cancel: threading.Event | None = None
    """Set to stop runs promptly."""
    warm: WarmPytest | None = None
    """The warm server, when one serves this command."""
    data_files: tuple[str, ...] = ()
    """Changed data files whose opens are recorded (baseline only)."""
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    @property
    def pytest_mode(self) -> bool:
        """True when the command runs pytest (JUnit outcomes available)."""
        return is_pytest_command(self.argv)

    def run(
        self, scratch: Path, tests: Sequence[str], limit: float | None, *,
        argv: Sequence[str] | None = None, extra: Mapping[str, str] | None = None,
        warm: bool = True, record_opens: bool = False,
    ) -> Observation:
        """Run the command (or `argv`) on `tests` in `scratch`. Raises ReviewError when it cannot start."""
        out = self.work / f"origin-{next(self._ids)}.json"
        env = origin.run_env(scratch, self.modules, self.work / "plugin", out, self.user_env,
                             self.data_files if record_opens else ())
        env = origin.merge_env(env, extra)
        run = run_tests(scratch, list(argv or self.argv), tests, limit, env_allow=self.settings.env_allow,
                        network=self.settings.network, extra_env=env, cancel=self.cancel,
                        warm=self.warm if warm else None)
        seen = origin.read_observed(out)
        try:
            os.unlink(out)
        except OSError:
            pass
        return Observation(run, seen, origin.foreign(seen.modules, scratch, self.modules))
