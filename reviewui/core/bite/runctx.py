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

from reviewui.core.bite import canary, origin, progress
from reviewui.core.bite import coverage_map as cm
from reviewui.core.bite.progress import Poller, ProgressSink
from reviewui.core.config import Settings
from reviewui.core.run import storage
from reviewui.core.run.runner import RunFiles, RunResult, is_pytest_command, run_tests
from reviewui.core.run.warm_runner import WarmPytest
from reviewui.core.test_layout import uses_xdist

XDIST_OFF = ["-n", "0"]
"""What every pytest run adds when the project's addopts (or the command) start pytest-xdist workers:
the workers are new interpreters that do not see the run's tree and import paths, so the run is made
in one process (said once, in the selection note)."""


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
    progress: ProgressSink | None = None
    """Where a long run's progress goes (runs made with a `phase`): tests done of collected, elapsed."""
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

    def without_quarantined(self, tests: Sequence[str]) -> tuple[str, ...]:
        """`tests` as a run names them: without the quarantined modules (a named path is collected
        whatever `--ignore` says), unless that would leave none."""
        return tuple(self._without_quarantined(tests)[0])

    @property
    def pytest_mode(self) -> bool:
        """True when the command runs pytest (JUnit outcomes available)."""
        return is_pytest_command(self.argv)

    def killed(self) -> bool:
        """True when the sweep was cancelled (nothing more should start)."""
        return self.cancel is not None and self.cancel.is_set()

    def _no_cov(self, command: Sequence[str]) -> list[str]:
        """`--no-cov` when the test Python has pytest-cov: a project's own coverage run (addopts `--cov`,
        a `fail_under` in its rcfile) fails any run of a subset of its tests whatever they do
        (aio-libs/yarl: "Required test coverage of 98.95% not reached", exit 1 with every test green),
        so no run of a sweep measures the project's coverage, the baseline included."""
        if "--no-cov" in command or not os.path.basename(command[0]).startswith("python"):
            return []  # a bare `pytest` command: its Python is not asked (the probe runs `<python> -c`)
        support = cm.probe_coverage(command[0], os.environ.get("PATH", os.defpath))
        return ["--no-cov"] if support is not None and support.pytest_cov else []

    @property
    def xdist_off(self) -> bool:
        """True when the base's addopts (or the command) start pytest-xdist workers: every run adds `-n 0`."""
        return self.pytest_mode and (self.settings.test_layout.xdist or uses_xdist(self.argv))

    def run(
        self, scratch: Path, tests: Sequence[str], limit: float | None, *,
        argv: Sequence[str] | None = None, extra: Mapping[str, str] | None = None,
        warm: bool = True, record_opens: bool = False, in_run_dir: RunFiles | None = None, coverage: bool = False,
        phase: str = "",
    ) -> Observation:
        """Run the command (or `argv`) on `tests` in `scratch`. Raises ReviewError when it cannot start.

        `coverage` measures the run with coverage.py (runner.run_tests says how).

        `in_run_dir` puts more files in the run's own directory (its `setup`
        returns more environment) and reads them back before the directory goes.
        `record_opens` marks the baseline: it also records data-file opens. Every run records which tests
        read a changed source file as data (`Observed.reads`): in the baseline for the whole sweep, in a
        graded run for that run's own grade (source_readers.py). A run watches other processes' opens
        too only where its tree is its own (a sandbox's sized copy): elsewhere reviewui's own work on
        the tree beside the run was taken for a test's child reading the file (seen unsandboxed: a
        real bite read as a reader's about 1 time in 10). A `phase` (`baseline`) sends
        the run's progress to `progress` while it runs.
        """
        box: dict[str, origin.Observed] = {}
        name = canary.new_name()
        pollers: list[Poller] = []

        def setup(run_dir: Path) -> dict[str, str]:
            # The plugin and its report live in the run's own directory: the only place
            # both a sandboxed cold run and a fork of a warm server can see.
            env = origin.run_env(scratch, self.modules, run_dir / "plugin", run_dir / "origin.json", self.user_env,
                                 self.data_files if record_opens else (), self.checkout_dirs, canary=name,
                                 sources=[m.path for m in self.modules],
                                 child_reads=storage.level() == "tmpfs")
            env = origin.merge_env(env, extra)
            env[progress.VAR] = str(run_dir / progress.FILE)  # every run writes it alike; long ones are read
            if phase and self.progress is not None:
                pollers.append(Poller(run_dir / progress.FILE, phase, self.progress))
                pollers[0].start()
            if in_run_dir is not None:
                env = origin.merge_env(env, in_run_dir.setup(run_dir))
            return env

        def collect(run_dir: Path) -> None:
            for poller in pollers:
                poller.stop()
            box["seen"] = origin.read_observed(run_dir / "origin.json")
            if in_run_dir is not None:
                in_run_dir.collect(run_dir)

        command = list(argv or self.argv)
        if self.pytest_mode:
            tests, more = self._without_quarantined(tests or self.suite)
            command += more + (XDIST_OFF if self.xdist_off else []) + self._no_cov(command)
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
