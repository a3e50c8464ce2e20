"""Bite-checks where the evidence could lie: red baseline, hangs, other commands, untrustworthy commands."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from reviewui.core.errors import ReviewError
from tests.core.bite.helpers import BASE, BRANCH, VENV_BIN, Watch, alive, feature_repo, load, use_venv_python
from tests.gitrepo import make_repo

CALC_TEST = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
COPY_TEST = ("try:\n    import pkg.calc  # noqa: F401\nexcept SyntaxError:\n    pass\n\n"
             "SRC = 'def add(a, b):\\n    return a + b\\n'\n\n\ndef test_add():\n    ns = {}\n    exec(SRC, ns)\n"
             "    assert ns['add'](1, 2) == 3\n")
"""A test that imports the changed module but exercises its own copy of the code."""


def _calc_repo(root: Path, tests: dict[str, str], conftest: str | None = None):
    """A branch fixing pkg/calc.py's add(), with these test files (and a root conftest.py in the base)."""
    base = {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n",
            **({"conftest.py": conftest} if conftest else {})}
    return make_repo(root, base, {"pkg/calc.py": "def add(a, b):\n    return a + b\n", **tests})

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _venv(monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)



def loop_tag(root: Path) -> str:
    """The argument of the tagged `sleep` a loop_repo test starts (unique per repo)."""
    return f"120.{abs(hash(str(root))) % 10**6:06d}"


def loop_repo(root: Path, pidfile: Path | None = None):
    """A hunk whose revert makes the code loop forever; the test starts a grandchild tagged `loop_tag(root)`.

    The loop sleeps a millisecond a turn: a reverted run waits out its timeout instead of
    spending a core on it (the suite runs many such runs beside each other).

    (It used to write pids to `pidfile`; a sandboxed run can write nothing outside its scratch.)
    """
    base = {"pkg/__init__.py": "", "pkg/loop.py": "import time\n\n\ndef count(n):\n    i = 0\n    while True:\n        i += 1\n        time.sleep(0.001)\n    return i\n"}
    branch = {
        "pkg/loop.py": "import time\n\n\ndef count(n):\n    i = 0\n    while True:\n        i += 1\n        time.sleep(0.001)\n        if i >= n:\n            break\n    return i\n",
        "tests/test_loop.py": (
            "import os, signal, subprocess\nfrom pkg.loop import count\n\n\n"
            "def test_count():\n"
            "    signal.alarm(120)  # a run orphaned by a broken cleanup (a mutant of it) still ends\n"
            f"    child = subprocess.Popen(['sleep', {loop_tag(root)!r}])\n"
            "    assert count(3) == 3\n"
        ),
    }
    return make_repo(root, base, branch)


def test_red_baseline_skips_every_hunk(tmp_path: Path) -> None:
    # Every selected test red: one red beside green ones is quarantined instead (test_quarantine.py).
    branch = {k: v for k, v in BRANCH.items() if k != "tests/test_names.py"}
    branch["tests/test_feature.py"] = "def test_red():\n    assert 1 == 2\n"
    rb = make_repo(tmp_path / "r", BASE, branch)
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=1)
    assert rep.baseline.status == "red"
    assert rep.baseline.failing_tests == ("tests/test_feature.py::test_red",)
    assert "assert 1 == 2" in rep.baseline.messages["tests/test_feature.py::test_red"]
    assert {r.verdict for r in rep.results} == {"skipped"} and len(rep.results) == 4
    assert rep.to_json(t)["baseline"]["failing_tests"] == ["tests/test_feature.py::test_red"]


def test_hang_is_a_timeout_and_leaves_no_process(tmp_path: Path) -> None:
    rb = loop_repo(tmp_path / "r")
    before = rb.snapshot()
    t, d = load(rb.root)
    start = time.monotonic()
    with Watch(loop_tag(rb.root)) as watch:
        rep = run_bite(t, d, Settings(), timeout=8, jobs=1)
    assert time.monotonic() - start < 45
    assert [r.verdict for r in rep.results] == ["timeout"]
    # the reverted run's pytest and its grandchild, as the host sees them
    pids = {*watch.seen, *watch.seen.values()}
    assert len(pids) >= 2
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in pids if alive(p)]
    assert rb.snapshot() == before


def test_non_pytest_command_is_graded_by_exit_code(tmp_path: Path) -> None:
    rb = feature_repo(tmp_path / "r")
    t, d = load(rb.root)
    cmd = "sh -c 'python -c \"from pkg.guard import clamp; import pkg.log; assert clamp(-5, 0, 10) == 0\"'"
    rep = run_bite(t, d, Settings(), test_cmd=cmd, hunks=[("pkg/guard.py", 0), ("pkg/log.py", 0)], jobs=2)
    assert rep.baseline.status == "green" and not rep.baseline.coverage_guided
    got = {r.file: r for r in rep.results}
    assert got["pkg/guard.py"].verdict == "bites" and "exit code 1" in got["pkg/guard.py"].reason
    assert got["pkg/log.py"].verdict == "toothless"
    assert rep.test_command == cmd


def test_command_that_always_exits_zero_is_refused(tmp_path: Path) -> None:
    rb = feature_repo(tmp_path / "r")
    t, d = load(rb.root)
    with pytest.raises(ReviewError, match="cannot be trusted"):
        run_bite(t, d, Settings(), test_cmd="sh -c 'python -m pytest \"$@\"; exit 0' sh")
    with pytest.raises(ReviewError, match="cannot be trusted"):
        run_bite(t, d, Settings(test_command="true"))


def test_without_coverage_in_the_python_nothing_is_called_uncovered(tmp_path: Path, monkeypatch) -> None:
    # A `python` first on PATH whose coverage import fails, as in a project venv without coverage.
    fake = tmp_path / "bin"
    nocov = tmp_path / "nocov" / "coverage"
    nocov.mkdir(parents=True)
    (nocov / "__init__.py").write_text("raise ImportError('no coverage here')\n")
    fake.mkdir()
    (fake / "python").write_text(
        f"#!/bin/sh\nPYTHONPATH={nocov.parent}${{PYTHONPATH:+:$PYTHONPATH}} exec {VENV_BIN}/python \"$@\"\n"
    )
    (fake / "python").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    rb = feature_repo(tmp_path / "r")
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), hunks=[("pkg/branchy.py", 0)], jobs=1)
    assert not rep.baseline.coverage_guided
    [r] = rep.results
    assert r.verdict == "toothless"  # really run, with every selected test
    assert r.tests_run == ("tests/test_feature.py", "tests/test_names.py")


def test_timeout_bounds_the_baseline_too(tmp_path: Path) -> None:
    """--timeout is the limit of every run: a baseline slower than it is a timeout, not waited for."""
    slow = "import time\nfrom pkg.calc import add\n\n\ndef test_slow():\n    time.sleep(30)\n    assert add(1, 2) == 3\n"
    rb = _calc_repo(tmp_path / "r", {"tests/test_slow.py": slow})
    t, d = load(rb.root)
    start = time.monotonic()
    rep = run_bite(t, d, Settings(), timeout=4, jobs=1)
    assert rep.baseline.status == "timeout" and "--timeout" in rep.baseline.reason, rep.baseline
    assert time.monotonic() - start < 20
    assert {r.verdict for r in rep.results} == {"skipped"}


@pytest.mark.parametrize("jobs", [1, 2], ids=["one-slot", "garbage-beside-baseline"])
def test_tests_exercising_another_copy_of_the_changed_code_are_caught(tmp_path: Path, jobs: int) -> None:
    """The test imports the changed module (the origin check is satisfied) but exercises its own copy.

    Every revert would be toothless for a reason that is not the tests' weakness: the
    instrument check puts garbage in the imported module and sees the tests still pass.
    With two slots that run is made beside the baseline, with garbage in every changed module.
    """
    rb = _calc_repo(tmp_path / "r", {"tests/test_copy.py": COPY_TEST})
    t, d = load(rb.root)
    with pytest.raises(ReviewError, match=r"imported pkg\.calc in the baseline, yet still pass"):
        run_bite(t, d, Settings(), jobs=jobs, guards=jobs > 1)  # with guards a lone hunk keeps both slots


@pytest.mark.parametrize("jobs", [1, 2], ids=["one-slot", "garbage-beside-baseline"])
def test_tests_that_never_import_the_change_stay_toothless(tmp_path: Path, jobs: int) -> None:
    """Not importing the changed code at all is the tests' weakness, reported as such (uncovered, not exit 3).

    With two slots the tests do pass with garbage in the changed module (made before the baseline
    says what is imported); nothing imported it, so that says nothing against the command."""
    unrelated = "def test_other():\n    assert 1 + 1 == 2\n"
    rb = _calc_repo(tmp_path / "r", {"tests/test_other.py": unrelated})
    t, d = load(rb.root)
    report = run_bite(t, d, Settings(), jobs=jobs, guards=jobs > 1)  # with guards a lone hunk keeps both slots
    assert [r.verdict for r in report.results] == ["uncovered"]


HIDE_FAILURES = (
    "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n    report = outcome.get_result()\n    if report.failed:\n"
    "        report.outcome = 'passed'  # every failure reported as a pass\n"
)


@pytest.mark.parametrize("jobs", [1, 2], ids=["one-slot", "instrument-beside-baseline"])
def test_a_conftest_that_reports_failures_as_passes_is_refused(tmp_path: Path, jobs: int) -> None:
    """The branch's conftest turns every failure into a pass: no revert could ever bite.

    With two slots the deliberately failing test runs beside the baseline; with one, after it.
    Either way the sweep refuses the command instead of calling the hunks toothless.
    """
    rb = make_repo(tmp_path / "r", BASE, {**BRANCH, "tests/conftest.py": HIDE_FAILURES})
    t, d = load(rb.root)
    with pytest.raises(ReviewError, match=r"deliberately failing test .* was passed"):
        run_bite(t, d, Settings(), jobs=jobs)


EXIT_ZERO_AT_THE_END = "def pytest_sessionfinish(session):\n    session.exitstatus = 0  # a red run exits green\n"


@pytest.mark.parametrize("jobs", [1, 2], ids=["one-slot", "instrument-beside-baseline"])
def test_a_conftest_that_makes_the_session_exit_zero_is_refused(tmp_path: Path, jobs: int) -> None:
    """The failure is reported, but the run exits 0 at its session end: pytest's half of the
    instrument check is a whole ordinary run, so its exit code is the command's."""
    rb = make_repo(tmp_path / "r", BASE, {**BRANCH, "tests/conftest.py": EXIT_ZERO_AT_THE_END})
    t, d = load(rb.root)
    with pytest.raises(ReviewError, match=r"deliberately failing test .* was failed with exit code 0"):
        run_bite(t, d, Settings(), jobs=jobs)


def _no_garbage_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import reviewui.core.bite.instrument as instrument

    def refuse(*a, **k):
        raise AssertionError("the garbage half ran on its own")

    monkeypatch.setattr(instrument, "garbage_passes", refuse)


def test_beside_the_baseline_the_garbage_half_is_a_fork_of_the_instrument_run(tmp_path: Path, monkeypatch) -> None:
    # Same answers as the runs on their own (above), one pytest start-up instead of two.
    _no_garbage_run(monkeypatch)
    rb = _calc_repo(tmp_path / "r", {"tests/test_calc.py": CALC_TEST})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=2, guards=True)
    assert rep.baseline.status == "green" and [r.verdict for r in rep.results] == ["bites"]
    rb = _calc_repo(tmp_path / "c", {"tests/test_copy.py": COPY_TEST})
    t, d = load(rb.root)
    with pytest.raises(ReviewError, match=r"imported pkg\.calc in the baseline, yet still pass"):
        run_bite(t, d, Settings(), jobs=2, guards=True)


def test_a_changed_module_the_conftest_imports_gets_its_garbage_run_on_its_own(tmp_path: Path, monkeypatch) -> None:
    # Imported while pytest configured, the module is already loaded when the fork would swap in
    # garbage: the fork declines, and the garbage half runs as a run of its own.
    import reviewui.core.bite.instrument as instrument

    real = instrument.garbage_passes
    calls: list[int] = []

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(instrument, "garbage_passes", counting)
    rb = _calc_repo(tmp_path / "r", {"tests/test_calc.py": CALC_TEST}, conftest="import pkg.calc  # noqa: F401\n")
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=2, guards=True)
    assert calls == [1]
    assert rep.baseline.status == "green" and [r.verdict for r in rep.results] == ["bites"]


def test_the_garbage_fork_stops_at_the_first_failure(tmp_path: Path, monkeypatch) -> None:
    # One failure answers whether the tests see the garbage (as --maxfail=1 does for the run of
    # its own): tests that import the module in their bodies fail one by one, and stop there.
    from reviewui.core.bite import revert_batch
    from reviewui.core.bite.instrument import GARBAGE

    _no_garbage_run(monkeypatch)
    runs: list = []
    real = revert_batch.ForkSession.collect

    def collect(self, run_dir):
        real(self, run_dir)
        runs.extend(f.run for e, f in zip(self.edits, self.forked, strict=True) if GARBAGE in e.files.values())

    monkeypatch.setattr(revert_batch.ForkSession, "collect", collect)
    lazy = "".join(f"def test_{n}():\n    from pkg.calc import add\n    assert add(1, {n}) == {n + 1}\n\n\n"
                   for n in range(3))
    rb = _calc_repo(tmp_path / "r", {"tests/test_lazy.py": lazy})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=2, guards=True)
    assert rep.baseline.status == "green"
    [garbage] = runs
    assert [x.outcome for x in garbage.tests] == ["failed"] and garbage.returncode == 1


def test_a_whole_suite_run_gets_its_garbage_run_on_its_own(tmp_path: Path, monkeypatch) -> None:
    # A fork collects only the tests it names: with the whole suite to run (pytest picks the
    # paths), the garbage half cannot be a fork, and runs on its own; the instrument run then
    # carries no fork plugin at all.
    from reviewui.core.bite import revert_batch

    staged: list[int] = []
    real = revert_batch.ForkSession.setup

    def setup(self, run_dir, scratch):
        staged.append(len(self.edits))
        return real(self, run_dir, scratch)

    monkeypatch.setattr(revert_batch.ForkSession, "setup", setup)
    rb = _calc_repo(tmp_path / "r", {"tests/test_copy.py": COPY_TEST})
    t, d = load(rb.root)
    with pytest.raises(ReviewError, match=r"imported pkg\.calc in the baseline, yet still pass"):
        run_bite(t, d, Settings(), jobs=2, guards=True, all_tests=True)
    assert staged == []


WRITES_THEN_IMPORTS = (
    "from pathlib import Path\n\n\ndef test_add():\n"
    "    Path('generated.txt').write_text('made by the test')  # into the working tree\n"
    "    from pkg.calc import add\n    assert add(1, 2) == 3\n"
)


def test_a_garbage_fork_that_changes_the_tree_leaves_the_instrument_test_to_a_run_of_its_own(
        tmp_path: Path) -> None:
    # The garbage fork's test writes into the tree before it fails: the instrument run then
    # collects nothing (revert_batch_child.py), and pytest's half is checked on its own
    # instead of being refused for a test that was never collected.
    rb = _calc_repo(tmp_path / "r", {"tests/test_writes.py": WRITES_THEN_IMPORTS})
    t, d = load(rb.root)
    rep = run_bite(t, d, Settings(), jobs=2, guards=True)
    assert rep.baseline.status == "green" and [r.verdict for r in rep.results] == ["bites"]
