"""A full sweep on a real repo: bites, toothless, uncovered and broken, and the reviewer's repo untouched."""

from __future__ import annotations

import json
import threading

import pytest

from reviewui.core.bite.engine import BiteCache, checkable_hunks, parse_hunk_spec, run_bite, selected_test_files
from reviewui.core.bite.report import VERDICTS
from reviewui.core.config import Settings
from reviewui.core.errors import ReviewError
from tests.core.bite.helpers import VENV_BIN, feature_repo, load

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    import os

    mp.setenv("PATH", VENV_BIN + os.pathsep + os.environ["PATH"])
    mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    rb = feature_repo(tmp_path_factory.mktemp("sweep") / "repo")
    before = rb.snapshot()
    t, d = load(rb.root)
    seen, progress = [], []
    cache = BiteCache()
    report = run_bite(t, d, Settings(), jobs=2, on_result=seen.append,
                      on_progress=lambda done, total: progress.append((done, total)), cache=cache)
    yield rb, before, t, d, report, seen, progress, cache
    mp.undo()


def verdicts(report) -> dict[str, str]:
    return {r.file: r.verdict for r in report.results}


def test_each_hunk_gets_the_honest_verdict(sweep) -> None:
    _, _, _, _, report, _, _, _ = sweep
    assert report.baseline.status == "green" and report.baseline.coverage_guided
    assert verdicts(report) == {
        "pkg/guard.py": "bites",
        "pkg/log.py": "toothless",
        "pkg/branchy.py": "uncovered",
        "pkg/names.py": "broken",
    }
    by = {r.file: r for r in report.results}
    assert by["pkg/guard.py"].failing_tests == ("tests/test_feature.py::test_clamp",)
    assert "assert -5 == 0" in by["pkg/guard.py"].messages["tests/test_feature.py::test_clamp"]
    assert "helper" in by["pkg/names.py"].reason and by["pkg/names.py"].failing_tests == ()
    # coverage-guided: the toothless hunk ran only the test that executes it; uncovered ran nothing
    assert by["pkg/log.py"].tests_run == ("tests/test_feature.py::test_label_runs",)
    assert by["pkg/branchy.py"].seconds == 0 and by["pkg/branchy.py"].tests_run == ()
    assert report.exit_code == 1


def test_reviewer_repo_is_byte_identical(sweep) -> None:
    rb, before, *_ = sweep
    assert rb.snapshot() == before


def test_results_stream_and_progress_counts(sweep) -> None:
    _, _, _, _, report, seen, progress, _ = sweep
    assert sorted(r.key for r in seen) == sorted(r.key for r in report.results)
    # 0 first: the graded runs have begun (the baseline is over), then one more per hunk graded
    assert [p[0] for p in progress] == [0, 1, 2, 3, 4] and {p[1] for p in progress} == {4}


def test_json_contract(sweep) -> None:
    _, _, t, _, report, *_ = sweep
    doc = json.loads(json.dumps(report.to_json(t)))
    assert set(doc) == {"repo", "branch", "base", "head", "test_command", "selected_tests", "selection", "sandbox",
                        "limits", "disk", "baseline", "hunks", "summary", "evidence",
                        "controls"}  # 27: disk; 40: evidence; 37: how many controls ran among the graded runs
    assert isinstance(doc["controls"], int) and doc["controls"] >= 2
    assert doc["sandbox"] == "bwrap"
    assert doc["limits"] in ("cgroup-v1", "cgroup-v2", "per-process")  # issue 27: how runs were bounded
    assert "sandbox: bwrap" in report.render_text(t)
    assert doc["branch"] == "agent/work" and doc["head"] == t.head and doc["base"] == t.base
    assert doc["test_command"] == "python -m pytest"
    assert doc["selected_tests"] == ["tests/test_feature.py", "tests/test_names.py"]
    assert set(doc["baseline"]) == {"status", "failing_tests", "seconds", "reason", "output_tail", "quarantined",
                                    "own_red"}  # issue 38: the branch's own red tests, never quarantined
    assert doc["selection"].startswith("4 tests: 4 in changed test files")
    for h in doc["hunks"]:
        assert set(h) == {"file", "index", "number", "header", "text", "verdict", "failing_tests", "failures", "reason",
                          "seconds", "scope", "evidence"}  # issue 40: evidence reused|fresh
        assert h["evidence"] == "fresh"  # run_bite with no grade book reuses nothing
        assert h["text"].startswith(h["header"]) and h["reason"]
    guard = next(h for h in doc["hunks"] if h["file"] == "pkg/guard.py")
    assert [f["test"] for f in guard["failures"]] == ["tests/test_feature.py::test_clamp"]
    assert "assert" in guard["failures"][0]["message"]
    assert doc["summary"] == {v: (1 if v in ("bites", "toothless", "uncovered", "broken") else 0) for v in VERDICTS}


def test_stryker_report(sweep) -> None:
    _, _, t, _, report, *_ = sweep
    doc = report.to_stryker(t)
    assert doc["schemaVersion"] == "1" and set(doc["thresholds"]) == {"high", "low"}
    mutants = {path: f["mutants"][0] for path, f in doc["files"].items()}
    assert mutants["pkg/guard.py"]["status"] == "Killed"
    assert mutants["pkg/guard.py"]["killedBy"] == ["tests/test_feature.py::test_clamp"]
    assert mutants["pkg/log.py"]["status"] == "Survived" and "killedBy" not in mutants["pkg/log.py"]
    assert mutants["pkg/branchy.py"]["status"] == "NoCoverage"
    assert mutants["pkg/names.py"]["status"] == "CompileError"
    g = mutants["pkg/guard.py"]
    assert g["mutatorName"] == "hunk-revert" and g["replacement"] == "def clamp(x, lo, hi):\n    return x"
    assert g["location"] == {"start": {"line": 1, "column": 1}, "end": {"line": 4, "column": 13}}
    assert doc["files"]["pkg/guard.py"]["language"] == "python"
    assert "if x < lo" in doc["files"]["pkg/guard.py"]["source"]


def test_matrix_and_decorative_tests(sweep) -> None:
    report = sweep[4]
    m = report.matrix()
    assert m["tests/test_feature.py::test_clamp"] == (("pkg/guard.py", 0),)
    # Only tests that ran for a checked hunk and passed each time: test_pick never ran (its
    # hunk is uncovered), test_helper failed (cross-hunk).
    assert set(report.decorative_tests()) == {"tests/test_feature.py::test_label_runs"}
    text = report.render_text(sweep[2])
    assert "BITES" in text and "TOOTHLESS" in text and "tests that bit nothing" in text


def test_single_hunk_reuses_cached_baseline(sweep) -> None:
    _, _, t, d, report, _, _, cache = sweep
    again = run_bite(t, d, Settings(), hunks=[("pkg/guard.py", 0)], cache=cache)
    assert again.baseline is report.baseline  # no second baseline run
    assert [(r.file, r.verdict) for r in again.results] == [("pkg/guard.py", "bites")]
    assert again.exit_code == 0


def test_cancel_before_start_skips_everything(sweep) -> None:
    _, _, t, d, _, _, _, cache = sweep
    cancel = threading.Event()
    cancel.set()
    rep = run_bite(t, d, Settings(), cancel=cancel, cache=cache)
    assert {r.verdict for r in rep.results if r.file != "pkg/branchy.py"} == {"skipped"}


def test_selection_and_hunk_specs(sweep) -> None:
    _, _, _, d, *_ = sweep
    assert selected_test_files(d) == ["tests/test_feature.py", "tests/test_names.py"]
    assert [f.path for f, _ in checkable_hunks(d)] == ["pkg/branchy.py", "pkg/guard.py", "pkg/log.py", "pkg/names.py"]
    assert parse_hunk_spec("pkg/guard.py:1", d) == [("pkg/guard.py", 0)]  # issue 16: N counts from 1
    assert parse_hunk_spec("pkg/guard.py", d) == [("pkg/guard.py", 0)]
    with pytest.raises(ReviewError, match="numbered 1 to 1"):
        parse_hunk_spec("pkg/guard.py:0", d)
    with pytest.raises(ReviewError, match="no hunk 2"):
        parse_hunk_spec("pkg/guard.py:2", d)
    with pytest.raises(ReviewError):
        parse_hunk_spec("nope.py", d)
    with pytest.raises(ReviewError, match="only source"):
        checkable_hunks(d, [("tests/test_feature.py", 0)])
    with pytest.raises(ReviewError, match="no hunk 4"):  # index 3 is hunk 4 to a person
        checkable_hunks(d, [("pkg/guard.py", 3)])


