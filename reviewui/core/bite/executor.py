"""The executor interface: what carries out a SweepPlan (plan.py), and what it must hand back.

`run_bite` prepares (baseline, instrument check), plans, then asks an
executor to `start` the plan and reads what it yields. Two exist: the local
one (executor_local.py: threads over this machine's scratch slots, batch
sessions, the warm server) and Ray (executor_ray.py: the same plan as Ray
tasks on a cluster's nodes). Every executor keeps these rules:

- Every run of agent code goes through `SweepJob.ctx.run` (the one
  sandboxed runner), on whichever machine it runs.
- `settle()` returns once whatever the executor checks before its items
  (a Ray node's head) has passed; it raises UntrustedCommand when it did not.
- `results()` yields each graded hunk revert, each (job, guard result)
  with the plan's own objects, and each control's ControlResult; an item
  it cannot grade in a batch is run alone (fallback.run_alone), never
  dropped. Whatever it fails to yield is graded `error`, "lost by the
  executor", by run_bite, which reports nothing before every control came
  back green (control.py).
- `cancel()` stops promptly: running process trees are killed, and what
  had not started comes back `skipped` ("cancelled") or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Protocol

from reviewui.core.bite.control import ControlResult
from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.plan import SweepPlan
from reviewui.core.bite.report import HunkResult
from reviewui.core.bite.runctx import RunContext
from reviewui.core.diff import Diff
from reviewui.core.target import Target

Result = HunkResult | tuple[GuardJob, GuardResult] | ControlResult
"""One graded item: a hunk revert's result, a guard job with its result, or a control's."""


@dataclass(frozen=True)
class SweepJob:
    """What every item of a plan needs beside itself."""

    target: Target
    """The repository and the head every scratch is checked out at."""
    diff: Diff
    """The branch's diff (a revert is graded against it: cross-hunk names)."""
    ctx: RunContext
    """How every run of the sweep is made (command, environment, sandbox settings, cancel)."""
    per_run: float
    """Seconds one run (one revert, one guard) may take."""
    head_text: Callable[[str], str | None]
    """A file's text at the head."""


class Execution(Protocol):
    """A plan being carried out."""

    def settle(self) -> None:
        """Return once the executor's own checks passed; raise UntrustedCommand when they did not."""

    def results(self) -> Iterator[Result]:
        """Every graded item, as it comes; ends when the plan is done."""

    def cancel(self) -> None:
        """Stop what runs now (process trees killed) and start nothing more."""


class Executor(Protocol):
    """Something that can carry out sweep plans."""

    name: str
    """`local` or `ray` (said in the report)."""
    slots: int
    """How many sessions can run at once (the plan is made for that many)."""

    def start(self, plan: SweepPlan, job: SweepJob) -> Execution:
        """Begin carrying out `plan`; the returned execution yields its results."""
