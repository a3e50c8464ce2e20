"""Red is red (issue 38): the branch's own new test failing at its head is an error, never quarantined.

An old test red at the head (one reading what a bare tree lacks) is still
quarantined, with why; the branch's own red test is left out of the revert
runs too (it fails with or without any revert) but said everywhere: the
`test-red-at-head` finding in `check`, `own_red` in the bite JSON, tier 1
"its own test fails" in the queue, and the review header (test in tests/ui).
"""

from __future__ import annotations

import json

import pytest

from reviewui.core.queue.order import BranchRecord, Evidence, place
from tests.clirun import run_cli
from tests.core.bite.helpers import use_venv_python
from tests.gitrepo import make_repo

# old, and red at the head (and on the base): quarantined, not the branch's doing
OLD_TEST = "def test_env_has_a_tool():\n    import shutil\n    assert shutil.which('no-such-tool-xyz')\n"
BASE = {
    "pkg/__init__.py": "",
    "pkg/calc.py": "def clamp(x, lo, hi):\n    return x\n",
    "tests/__init__.py": "",
    "tests/test_clamp.py": OLD_TEST,
}
BRANCH = {
    "pkg/calc.py": "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    return x\n",
    "tests/test_clamp.py": (
        OLD_TEST + "\n\nfrom pkg.calc import clamp\n\n\n"
        "def test_low():\n    assert clamp(-1, 0, 9) == 0\n\n\n"
        # the branch's own test, red at its own head: the clamp has no upper bound
        "def test_high():\n    assert clamp(12, 0, 9) == 9\n"
    ),
}
RED = "tests/test_clamp.py::test_high"
OLD = "tests/test_clamp.py::test_env_has_a_tool"


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    """`check --bite` once (its sweep and findings go to the store), then what the other commands say."""
    mp = pytest.MonkeyPatch()
    use_venv_python(mp)
    dirs = {var: str(tmp_path_factory.mktemp(var.lower())) for var in ("XDG_STATE_HOME", "XDG_CACHE_HOME",
                                                                       "XDG_CONFIG_HOME")}
    for var, path in dirs.items():
        mp.setenv(var, path)
    rb = make_repo(tmp_path_factory.mktemp("red") / "repo", BASE, BRANCH)
    check = run_cli("check", "agent/work", "--bite", "--format", "json", cwd=rb.root, timeout=600)
    bite = run_cli("bite", "agent/work", "--format", "json", cwd=rb.root, timeout=600)
    queue = run_cli("queue", "--format", "json", cwd=rb.root, timeout=120)
    yield rb, check, bite, queue, dirs
    mp.undo()


@pytest.mark.slow
def test_the_branchs_own_red_test_is_an_error_finding(checked) -> None:
    _, check, _, _, _ = checked
    doc = json.loads(check.stdout)
    red = [f for f in doc["findings"] if f["kind"] == "test-red-at-head"]
    assert [(f["severity"], f["symbol"], f["file"]) for f in red] == [("error", RED, "tests/test_clamp.py")]
    assert "assert 12 == 9" in red[0]["message"]
    assert not any(f["symbol"] == OLD for f in red)  # an old red test is not the branch's doing
    assert check.returncode == 1


@pytest.mark.slow
def test_only_the_old_red_test_is_quarantined_and_the_hunk_is_still_graded(checked) -> None:
    _, _, bite, _, _ = checked
    doc = json.loads(bite.stdout)
    base = doc["baseline"]
    assert [q["test"] for q in base["quarantined"]] == [OLD] and base["quarantined"][0]["why"] == "red at the head"
    assert [r["test"] for r in base["own_red"]] == [RED]
    assert base["status"] == "green"
    assert [h["verdict"] for h in doc["hunks"]] == ["bites"]


@pytest.mark.slow
def test_the_queue_puts_it_first_saying_its_own_test_fails(checked) -> None:
    _, _, _, queue, _ = checked
    [row] = json.loads(queue.stdout)["rows"]
    assert (row["tier"], row["reason"]) == (1, "its own test fails"), row


def test_tier_one_only_for_the_branchs_own_red_test() -> None:
    from datetime import datetime, timezone

    def rec(e: Evidence, **kw) -> BranchRecord:
        return BranchRecord("agent/x", "h", "b", datetime(2026, 1, 1, tzinfo=timezone.utc), evidence=e, **kw)

    assert (place(rec(Evidence("ready", toothless=3, red_own=1))).tier,
            place(rec(Evidence("ready", toothless=3, red_own=1))).reason) == (1, "its own test fails")
    assert place(rec(Evidence("broken", why="baseline red", red_own=2))).reason == \
        "its own test fails (2 red at the head)"
    assert place(rec(Evidence("ready", toothless=3))).tier == 2
    # a reviewer's current approve stands: the reviewer saw the evidence
    assert place(rec(Evidence("ready", red_own=1), verdict="approve", currency="current")).tier == 5


def test_red_tests_split_into_the_branchs_own_and_old_ones() -> None:
    from reviewui.core.bite.baseline import is_own, quarantine
    from reviewui.core.bite.report import Baseline

    own = ("tests/test_new.py::test_a", "tests/test_new.py::TestK::test_b")
    red = Baseline("red", ("tests/test_new.py::test_a[1]", "tests/test_old.py::test_x", "tests/test_new.py"),
                   {"tests/test_old.py::test_x": "boom"}, tests=("tests/test_new.py::test_a[1]",
                                                               "tests/test_old.py::test_x", "tests/test_ok.py::test_ok"))
    got = quarantine(red, own)
    assert got.status == "green" and got.tests == ("tests/test_ok.py::test_ok",)
    assert got.own_red == ("tests/test_new.py::test_a[1]", "tests/test_new.py")  # a module of own tests too
    assert got.quarantined == ("tests/test_old.py::test_x",) and got.why == {"tests/test_old.py::test_x": "red at the head"}
    assert set(got.left_out) == set(red.failing_tests)
    assert not is_own("tests/test_new.py::test_c", own) and is_own("tests/test_new.py::TestK::test_b", own)
    # nothing green: the baseline stays red, its own red tests still named
    only_own = quarantine(Baseline("red", ("tests/test_new.py::test_a",), tests=("tests/test_new.py::test_a",)), own)
    assert only_own.status == "red" and only_own.own_red == ("tests/test_new.py::test_a",)


async def test_the_review_header_says_the_branchs_own_test_is_red(checked, monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewui.core.session import ReviewSession
    from reviewui.ui.app import make_app
    from reviewui.ui.widgets.review_header import ReviewHeader
    from tests.ui.ready import review_ready

    rb, _, _, _, dirs = checked
    use_venv_python(monkeypatch)
    for var, path in dirs.items():  # the module's store: `check` filled it
        monkeypatch.setenv(var, path)
    app = make_app(ReviewSession.open(rb.root, "agent/work"))
    async with app.run_test(size=(200, 40)) as pilot:
        screen = await review_ready(app, pilot)
        header = screen.query_one(ReviewHeader)
        assert header.red_own == 1 and header.quarantined == 1
        assert "1 own test red at head" in str(header.render())
