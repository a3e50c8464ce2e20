"""The canary: in every pytest run reviewui makes, one more test, named at random, that must fail.

The origin plugin (origin.py) runs it after the project's tests and takes
it out of the counts and the exit code again. A branch whose code rewrites
test reports (a conftest hook turning failures into passes) rewrites the
canary's too: reported as anything but failed, or not reported at all, the
run is `broken` ("the branch's code rewrites test reports"), and nothing it
says counts. A run stopped by a timeout or a limit (`process limit`, `file
limit`, …) wrote no report to judge: it is graded by that name instead. The name comes from neither the environment nor a file the run
can still read: the plugin reads it once and removes it.
"""

from __future__ import annotations

import secrets
from dataclasses import replace

from reviewui.core.bite.origin import Observed
from reviewui.core.run.runner import RunResult

TAMPERED = "the branch's code rewrites test reports"
"""The reason a run whose canary did not fail is `broken`."""


def new_name() -> str:
    """A fresh canary name: a test function name nobody can guess."""
    return f"test_{secrets.token_hex(8)}"


def judge(run: RunResult, observed: Observed) -> tuple[RunResult, str | None]:
    """(`run` without the canary's outcome, why it cannot be believed or None)."""
    name = observed.canary
    if not name:
        return run, None  # no canary ran (nothing was collected, or the session never got there)
    mine = [t for t in run.tests if t.id.rsplit("::", 1)[-1] == name]
    run = replace(run, tests=tuple(t for t in run.tests if t not in mine))
    if run.killed or run.limit:
        return run, None  # stopped before its report was written: graded by the timeout or limit, not as tampering
    if not mine:
        return run, f"{TAMPERED}: a deliberately failing test ({name}) was not reported at all"
    wrong = [t.outcome for t in mine if t.outcome != "failed"]
    if wrong:
        return run, f"{TAMPERED}: a deliberately failing test ({name}) was {wrong[0]}"
    return run, None
