"""Progress on long runs (issue 39): tests done of pytest's own collection count, and elapsed time.

A heavily parametrized baseline (issue 39 saw 7 638 tests sit three minutes on
"baseline run of the selected tests…") reports its count while it runs: to the
sink a front end gives (the app's status line, tests/ui/test_tests_progress.py)
and headless on stderr.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewui.core.bite.progress import TestsProgress, read
from reviewui.core.session import ReviewSession
from tests.clirun import run_cli
from tests.core.bite.helpers import use_venv_python
from tests.gitrepo import make_repo

N = 400
CALC = "def clamp(x):\n    return x\n"
CALC_BRANCH = "def clamp(x):\n    if x < 0:\n        return 0\n    return x\n"
MANY = ("import time\n\nimport pytest\n\nfrom calc import clamp\n\n\n"
        f"@pytest.mark.parametrize('x', range({N}))\n"
        # they never run the changed code: the reverts (coverage-guided) run test_low alone
        "def test_many(x):\n    time.sleep(0.01)\n    assert x >= 0\n\n\n"
        "def test_low():\n    assert clamp(-1) == 0\n")


def many_repo(root: Path):
    return make_repo(root, {"calc.py": CALC, "test_calc.py": "def test_nothing():\n    pass\n"},
                     {"calc.py": CALC_BRANCH, "test_calc.py": MANY})


def test_a_long_baseline_reports_tests_done_of_the_collected_count(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    rb = many_repo(tmp_path / "r")
    seen: list[TestsProgress] = []
    report = ReviewSession.open(rb.root, "agent/work").bite(on_tests=seen.append)
    assert report.baseline.status == "green" and len(report.baseline.tests) == N + 1
    baseline = [p for p in seen if p.phase == "baseline"]
    assert baseline, seen
    counted = [p for p in baseline if p.total]
    assert {p.total for p in counted} == {N + 1}  # pytest's own count (the canary is not the project's)
    assert any(0 < p.done < p.total for p in counted)  # seen while it ran, not only at the end
    assert baseline[-1].done == N + 1 and baseline[-1].elapsed > 0
    assert [p.done for p in counted] == sorted(p.done for p in counted)
    assert "/401 tests, " in counted[-1].words()


def test_headless_progress_goes_to_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    rb = many_repo(tmp_path / "r")
    proc = run_cli("tests", "agent/work", "--format", "json", cwd=rb.root, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("reviewui: baseline: ")]
    assert lines and lines[0].endswith("s") and ("collecting tests" in lines[0] or "/401 tests" in lines[0])
    assert any(ln.startswith("reviewui: base run: ") for ln in proc.stderr.splitlines())


def test_a_progress_file_is_read_within_bounds(tmp_path: Path) -> None:
    f = tmp_path / "progress"
    assert read(f) is None
    f.write_text("12 7638\n")
    assert read(f) == (12, 7638)
    f.write_text("9999 10\n")
    assert read(f) == (10, 10)  # never more done than collected
    for junk in ("", "x y", "1 2 3", "1" * 20 + " 2", "-1 5"):
        f.write_text(junk)
        assert read(f) is None, junk


def test_a_hostile_progress_file_is_never_waited_on_or_followed(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "progress"
    os.mkfifo(fifo)
    assert read(fifo) is None  # a FIFO: open would block a reader without O_NONBLOCK
    fifo.unlink()
    (tmp_path / "real").write_text("3 4\n")
    fifo.symlink_to(tmp_path / "real")
    assert read(fifo) is None  # a link: not followed
    fifo.unlink()
    fifo.write_text("1 2 " + "x" * 100)
    assert read(fifo) is None  # over 64 bytes


def test_a_headless_sweep_says_when_its_graded_runs_begin_and_end(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """After the baseline a guard sweep said nothing on a stderr that is no terminal (seen: six minutes
    of silence in a CI-like log); it now says when its graded runs begin and when the last hunk is in."""
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "r", {"calc.py": CALC, "other.py": "def one():\n    return 1\n"},
                   {"calc.py": CALC_BRANCH, "other.py": "def one():\n    return 1 + 0 * 2\n",
                    "test_calc.py": "from calc import clamp\nfrom other import one\n\n\n"
                                    "def test_low():\n    assert clamp(-1) == 0\n\n\n"
                                    "def test_one():\n    assert one() == 1\n"})
    proc = run_cli("bite", "agent/work", "--guards", "--format", "json", cwd=rb.root)
    assert proc.returncode in (0, 1), proc.stderr
    said = [ln for ln in proc.stderr.splitlines() if ln.startswith("reviewui: bite-check: ")]
    assert said[0].startswith("reviewui: bite-check: 0/2 hunks, "), proc.stderr
    assert said[-1].startswith("reviewui: bite-check: 2/2 hunks, ") and said[-1].endswith("s"), proc.stderr
    baseline = [n for n, ln in enumerate(proc.stderr.splitlines()) if ln.startswith("reviewui: baseline: ")]
    assert baseline and baseline[0] < proc.stderr.splitlines().index(said[0])  # after the baseline's own lines
