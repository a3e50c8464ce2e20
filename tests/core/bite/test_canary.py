"""The canary's verdict on a run: taken out of the outcomes, and the run not believed unless it failed."""

from __future__ import annotations

from reviewui.core.bite.canary import TAMPERED, judge, new_name
from reviewui.core.bite.origin import Observed
from reviewui.core.run.junit import TestOutcome
from reviewui.core.run.runner import RunResult


def _run(*tests: TestOutcome, **kw: object) -> RunResult:
    fields: dict[str, object] = {"returncode": 0, **kw}
    return RunResult(command=("pytest",), seconds=0.1, pytest=True, tests=tests, **fields)  # type: ignore[arg-type]


def test_judge() -> None:
    name = new_name()
    assert name.startswith("test_") and name.isidentifier() and name != new_name()
    seen = Observed({}, {}, True, name)
    real = TestOutcome("t.py::test_a", "passed")
    run, why = judge(_run(real, TestOutcome(f"t.py::{name}", "failed", "AssertionError")), seen)
    assert why is None and run.tests == (real,)
    run, why = judge(_run(real, TestOutcome(f"t.py::{name}", "passed")), seen)
    assert why is not None and why.startswith(TAMPERED) and "was passed" in why and run.tests == (real,)
    _, why = judge(_run(real), seen)
    assert why is not None and "not reported" in why
    _, why = judge(_run(real, returncode=None, timed_out=True), seen)
    assert why is None  # a killed run is graded as killed
    assert judge(_run(real), Observed({}, {}, True)) == (_run(real), None)  # no canary ran: nothing to judge
