"""What a re-verification session's fork replies come to (verify._said): a fork that could not run its
witness test says nothing (the test then runs the ordinary way), never a pass or a failure."""

from __future__ import annotations

from reviewui.core.witness.verify import _said

PATH = "tests/test_reviewui_witness_1.py"


def test_a_fork_that_ran_the_test_gives_its_outcome() -> None:
    assert _said({"tests": [{"id": f"{PATH}::test_witness_f_line_3", "outcome": "passed"}]}, PATH) == "passed"
    assert _said({"tests": [{"id": f"{PATH}::test_witness_f_line_3", "outcome": "failed"}]}, PATH) == "failed"
    # an error (a fixture, the import) is not the failure re-verification asks of the revert
    assert _said({"tests": [{"id": f"{PATH}::t", "outcome": "error"}]}, PATH) == "error"
    # the worst of several, and an outcome the fork made up counts as an error
    assert _said({"tests": [{"id": f"{PATH}::a", "outcome": "passed"}, {"id": f"{PATH}::b", "outcome": "failed"}]},
                 PATH) == "failed"
    assert _said({"tests": [{"id": f"{PATH}::a", "outcome": "bites"}]}, PATH) == "error"


def test_a_fork_that_could_not_run_it_says_nothing() -> None:
    assert _said({"fallback": "none of its tests was collected"}, PATH) is None
    assert _said(None, PATH) is None and _said("passed", PATH) is None and _said({"tests": "x"}, PATH) is None
    # another file's outcome is not this test's
    assert _said({"tests": [{"id": "tests/test_other.py::t", "outcome": "passed"}]}, PATH) is None
    assert _said({"timeout": True, "seconds": 9.0}, PATH) == "timeout"  # ran, and is no failure
