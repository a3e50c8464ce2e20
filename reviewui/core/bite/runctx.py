"""One sweep's way of running the test command in a scratch: same env, roots and plugin every run.

Every run of a sweep (baseline, instrument check, each revert; warm or cold)
goes through `RunContext.run`, so all of them see the same thing: the
user's `VAR=value` words, the scratch's import roots first, the origin
plugin, and relative PYTHONPATH entries resolved against the scratch.
The result says whether a changed module came from outside the scratch.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from reviewui.core.bite import canary, origin
from reviewui.core.config import Settings
from reviewui.core.run.runner import RunFiles, RunResult, is_pytest_command, run_tests
from reviewui.core.run.warm_runner import WarmPytest


@dataclass(frozen=True)
class Observation:
    """A run and what the origin plugin saw in it."""

    run: RunResult
    """The run itself."""
    observed: origin.Observed
    """Module origins and data-file opens."""
    foreign: str | None
    """Why the run does not count (a changed module came from elsewhere, its reports were rewritten), else None."""


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
    """A private directory of the sweep's (outside every scratch), never seen by a run: what a run
    writes comes back through its own run directory (`RunFiles`), copied here by reviewui."""
    cancel: threading.Event | None = None
    """Set to stop runs promptly."""
    warm: WarmPytest | None = None
    """The warm server, when one serves this command."""
    data_files: tuple[str, ...] = ()
    """Changed data files whose opens are recorded (baseline only)."""
    checkout_dirs: tuple[str, ...] = ()
    """Import directories the test Python has inside the reviewer's checkout (origin.checkout_roots)."""
    suite: tuple[str, ...] = ()
    """Test modules a pytest run that names no test names instead (a bare run would not find them:
    test_layout.TestLayout.suite_paths)."""
    quarantined: tuple[str, ...] = ()
    """Node ids red at the head, left out of every pytest run after the baseline (`--deselect`)."""
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def _without_quarantined(self, tests: Sequence[str]) -> tuple[Sequence[str], list[str]]:
        """(`tests` without the quarantined modules, the options leaving every quarantined test out).

        A quarantined test is deselected; a quarantined module (it cannot be imported at the head)
        is ignored, and dropped from the paths named, where `--ignore` does not reach. A selection
        that would be left empty is kept whole: an empty one would run the whole suite.
        """
        modules = {q for q in self.quarantined if "::" not in q}
        kept = [t for t in tests if t.split("::", 1)[0] not in modules]
        options = [f"--deselect={q}" for q in self.quarantined if "::" in q] + [f"--ignore={m}" for m in sorted(modules)]
        return (kept if kept or not tests else tests), options

    @property
    def pytest_mode(self) -> bool:
        """True when the command runs pytest (JUnit outcomes available)."""
        return is_pytest_command(self.argv)

    def run(
        self, scratch: Path, tests: Sequence[str], limit: float | None, *,
        argv: Sequence[str] | None = None, extra: Mapping[str, str] | None = None,
        warm: bool = True, record_opens: bool = False, in_run_dir: RunFiles | None = None, coverage: bool = False,
    ) -> Observation:
        """Run the command (or `argv`) on `tests` in `scratch`. Raises ReviewError when it cannot start.

        `coverage` measures the run with coverage.py (runner.run_tests says how).

        `in_run_dir` puts more files in the run's own directory (its `setup`
        returns more environment) and reads them back before the directory goes.
        """
        box: dict[str, origin.Observed] = {}
        name = canary.new_name()

        def setup(run_dir: Path) -> dict[str, str]:
            # The plugin and its report live in the run's own directory: the only place
            # both a sandboxed cold run and a fork of a warm server can see.
            env = origin.run_env(scratch, self.modules, run_dir / "plugin", run_dir / "origin.json", self.user_env,
                                 self.data_files if record_opens else (), self.checkout_dirs, canary=name,
                                 sources=[m.path for m in self.modules] if record_opens else ())
            env = origin.merge_env(env, extra)
            return origin.merge_env(env, in_run_dir.setup(run_dir)) if in_run_dir is not None else env

        def collect(run_dir: Path) -> None:
            box["seen"] = origin.read_observed(run_dir / "origin.json")
            if in_run_dir is not None:
                in_run_dir.collect(run_dir)

        command = list(argv or self.argv)
        if self.pytest_mode:
            tests, more = self._without_quarantined(tests or self.suite)
            command += more
        run = run_tests(scratch, command, tests, limit, env_allow=self.settings.env_allow,
                        network=self.settings.network, cancel=self.cancel, warm=self.warm if warm else None,
                        run_files=RunFiles(setup, collect), coverage=coverage)
        return observe(run, box["seen"], scratch, self.modules, command[0])


def observe(run: RunResult, seen: origin.Observed, scratch: Path,
            modules: Sequence[origin.ChangedModule], python: str | None = None) -> Observation:
    """The Observation of `run` (of `python`): its canary taken out and judged (canary.py), module
    origins checked."""
    run, tampered = canary.judge(run, seen)
    return Observation(run, seen, tampered or origin.foreign(seen.modules, scratch, modules, python))
