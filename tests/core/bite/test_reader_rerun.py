"""The rerun of a bite won beside a reader (reader_rerun.py), pure: runs and controls made by hand.

The sweep that needs it for real is tests/hostile/test_handed_reads.py (a hash handed over in a
module global). Here: what is rerun, with which tests, and what each outcome comes to.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from reviewui.core.bite.control import ControlResult
from reviewui.core.bite.coverage_map import Selection
from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.guards import Guard
from reviewui.core.bite.plan import ControlItem, GuardItem, Item, RevertItem
from reviewui.core.bite.reader_rerun import without_readers
from reviewui.core.bite.report import HunkResult
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import parse_hunks

PATH = "pkg/m.py"
READER, PIN, REAL = "tests/t.py::test_reader", "tests/t.py::test_pin", "tests/u.py::test_real"
READERS = {PATH: frozenset({READER})}
F = FileDiff(PATH, None, "modified", "source", False, 1, 0, None, None, None, None, None)
HUNK = parse_hunks(PATH, f"--- a/{PATH}\n+++ b/{PATH}\n@@ -1,0 +1,1 @@\n+x = 1\n")[0]
FILES = [(F, HUNK)]


def hunk(*failing: str, verdict: str = "bites") -> HunkResult:
    return HunkResult(PATH, 0, HUNK.header, HUNK.text, verdict, failing_tests=failing,  # type: ignore[arg-type]
                      messages=dict.fromkeys(failing, "boom"))


def guard_pair(*failing: str) -> tuple[GuardJob, GuardResult]:
    g = Guard(file=PATH, hunk=0, line=1, kind="statement", description="x", source="", start=(1, 1),
              end=(1, 2), replacement="pass", cover_lines=(1,))
    return (GuardJob(g, Selection("tests", (READER, PIN)), (READER, PIN)),
            GuardResult(PATH, 0, 1, "statement", "x", "bites", failing_tests=failing))


class Runs:
    """run_alone and control_alone by hand: what each would fail, and what they were asked."""

    def __init__(self, edit_fails: tuple[str, ...], null_fails: tuple[str, ...] = (), verdict: str = "",
                 null_ran: bool = True) -> None:
        self.edit_fails, self.null_fails, self.verdict, self.null_ran = edit_fails, null_fails, verdict, null_ran
        self.asked: list[Item] = []

    def alone(self, item: Item) -> object:
        self.asked.append(item)
        tests = item.tests if isinstance(item, (RevertItem, ControlItem)) else item.job.tests
        failed = tuple(t for t in self.edit_fails if t in tests)
        verdict = self.verdict or ("bites" if failed else "toothless")
        if isinstance(item, GuardItem):
            return item.job, GuardResult(PATH, 0, 1, "statement", "x", verdict, failing_tests=failed)
        return hunk(*failed, verdict=verdict)

    def control(self, item: ControlItem) -> ControlResult:
        self.asked.append(item)
        return ControlResult("revert", item.tests, tuple(t for t in self.null_fails if t in item.tests),
                             ran=self.null_ran)


def test_a_bite_by_a_test_that_fails_again_without_the_readers_stands() -> None:
    runs = Runs(edit_fails=(PIN, REAL))
    [out] = without_readers([hunk(READER, PIN, REAL)], READERS, FILES, runs.alone, runs.control)
    # rerun and control with the non-readers only: nothing read can be handed over
    assert [type(i).__name__ for i in runs.asked] == ["RevertItem", "ControlItem"]
    assert all(i.tests == (PIN, REAL) for i in runs.asked)  # type: ignore[union-attr]
    assert isinstance(out, HunkResult) and out.verdict == "bites" and out.failing_tests == (PIN, REAL)
    assert set(out.messages) == {PIN, REAL}


def test_a_pin_that_passes_without_its_reader_bites_nothing() -> None:
    runs = Runs(edit_fails=())  # lenient: without the reader's global the pin passes
    [out] = without_readers([hunk(PIN)], READERS, FILES, runs.alone, runs.control)
    assert isinstance(out, HunkResult) and out.verdict == "toothless" and not out.failing_tests
    assert READER in out.reason and "test-reads-changed-source" in out.reason and f"{PIN} passed" in out.reason


def test_a_pin_that_fails_at_the_head_without_its_reader_bites_nothing() -> None:
    runs = Runs(edit_fails=(PIN, REAL), null_fails=(PIN,))  # strict: KeyError with or without the edit
    [out] = without_readers([hunk(PIN, REAL)], READERS, FILES, runs.alone, runs.control)
    assert isinstance(out, HunkResult) and out.failing_tests == (REAL,)  # the real test keeps its bite
    runs = Runs(edit_fails=(PIN,), null_fails=(PIN,))
    [out] = without_readers([hunk(PIN)], READERS, FILES, runs.alone, runs.control)
    assert isinstance(out, HunkResult) and out.verdict == "toothless"
    assert "failed with nothing changed too" in out.reason


def test_a_control_that_fails_beyond_its_tests_or_a_rerun_that_times_out_leaves_no_bite() -> None:
    unclean = Runs(edit_fails=(PIN,))

    def control(item: ControlItem) -> ControlResult:
        return ControlResult("revert", item.tests, ("the run timed out after 9.0s",))

    [out] = without_readers([hunk(PIN)], READERS, FILES, unclean.alone, control)
    assert isinstance(out, HunkResult) and out.verdict == "toothless"
    timeout = Runs(edit_fails=(PIN,), verdict="timeout")
    [out] = without_readers([hunk(PIN)], READERS, FILES, timeout.alone, timeout.control)
    assert isinstance(out, HunkResult) and out.verdict == "toothless" and "came to timeout" in out.reason


def test_a_guard_is_rerun_as_a_guard_with_the_readers_deselected() -> None:
    runs = Runs(edit_fails=())
    [out] = without_readers([guard_pair(PIN)], READERS, FILES, runs.alone, runs.control)
    item = runs.asked[0]
    assert isinstance(item, GuardItem) and item.job.tests == (PIN,)
    assert isinstance(out, tuple) and out[1].verdict == "toothless" and READER in out[1].reason


def test_nothing_is_rerun_without_a_reader_or_a_bite_or_when_only_readers_failed() -> None:
    runs = Runs(edit_fails=(PIN,))
    held = [hunk(PIN), replace(hunk(READER)), hunk(verdict="toothless"), replace(hunk(PIN), index=3)]
    readers = {PATH: frozenset({READER})}
    out = without_readers(held[1:], readers, FILES, runs.alone, runs.control)
    assert out == held[1:] and all(a is b for a, b in zip(out, held[1:], strict=True)) and not runs.asked
    assert without_readers(held[:1], {}, FILES, runs.alone, runs.control) == held[:1] and not runs.asked


def test_a_sweep_cancelled_meanwhile_skips_the_item() -> None:
    runs = Runs(edit_fails=(PIN,), null_ran=False)
    [out] = without_readers([hunk(PIN)], READERS, FILES, runs.alone, runs.control)
    assert isinstance(out, HunkResult) and (out.verdict, out.reason) == ("skipped", "cancelled")


def test_a_control_that_collects_nothing_leaves_no_bite() -> None:
    runs = Runs(edit_fails=(PIN,))

    def control(item: ControlItem) -> ControlResult:
        return ControlResult("revert", item.tests, no_tests=True)

    [out] = without_readers([hunk(PIN)], READERS, FILES, runs.alone, control)
    assert isinstance(out, HunkResult) and out.verdict == "toothless" and "no test was collected" in out.reason


def test_the_reason_names_three_readers_and_counts_the_rest() -> None:
    many = {PATH: frozenset(f"tests/t.py::test_reader{n}" for n in range(5))}
    [out] = without_readers([hunk(PIN)], many, FILES, Runs(edit_fails=()).alone, Runs(edit_fails=()).control)
    assert isinstance(out, HunkResult) and "test_reader2 and 2 more" in out.reason, out.reason
    assert "test_reader3" not in out.reason


def test_a_reader_seen_only_in_the_graded_run_is_set_aside_and_the_rest_rerun() -> None:
    runs = Runs(edit_fails=(REAL,))
    first = replace(hunk(PIN, REAL), run_readers=(PIN,))  # no reader in the baseline; PIN read in this run
    [out] = without_readers([first], {}, FILES, runs.alone, runs.control)
    assert [i.tests for i in runs.asked] == [(REAL,), (REAL,)]  # type: ignore[union-attr]
    assert isinstance(out, HunkResult) and out.failing_tests == (REAL,)


def test_a_test_that_reads_in_the_rerun_itself_bites_nothing_there() -> None:
    class Reading(Runs):
        def alone(self, item: Item) -> object:
            return replace(super().alone(item), run_readers=(PIN,))  # type: ignore[type-var]

    runs = Reading(edit_fails=(PIN,))
    [out] = without_readers([hunk(READER, PIN)], READERS, FILES, runs.alone, runs.control)
    assert isinstance(out, HunkResult) and out.verdict == "toothless"


def test_regrade_sets_aside_a_guards_own_run_readers() -> None:
    from reviewui.core.bite.source_readers import regrade

    g = replace(guard_pair(PIN)[1], run_readers=(PIN,))
    out = regrade(replace(hunk(REAL), guards=(g, guard_pair(PIN)[1])), {})
    assert out.verdict == "bites" and out.failing_tests == (REAL,)  # the hunk's own bite stands
    assert [x.verdict for x in out.guards] == ["toothless", "bites"]  # only the guard whose run read it
    assert "read pkg/m.py as data" in out.guards[0].reason


def test_other_processes_are_watched_only_where_the_runs_tree_is_its_own(tmp_path, monkeypatch) -> None:
    """Unsandboxed, reviewui's own work on the shared tree read as a test's child reading the file
    (a real bite toothless about 1 time in 10): the watch is asked for only in a sandbox's own copy."""
    from reviewui.core.bite import origin, runctx
    from reviewui.core.config import Settings

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("X = 1\n")
    envs: list[dict[str, str]] = []

    def fake_run_tests(scratch, command, tests, limit, run_files=None, **kw):  # type: ignore[no-untyped-def]
        run_dir = tmp_path / f"run{len(envs)}"
        run_dir.mkdir()
        envs.append(run_files.setup(run_dir))
        raise RuntimeError("stop here")

    monkeypatch.setattr(runctx, "run_tests", fake_run_tests)
    ctx = runctx.RunContext(["python", "-m", "pytest"], {}, [origin.ChangedModule("pkg/m.py", "pkg.m", "")], Settings(),
                            tmp_path / "work", None, None)
    for level in ("tmpfs", "none"):
        monkeypatch.setattr(runctx.storage, "level", lambda level=level: level)
        with pytest.raises(RuntimeError):
            ctx.run(tmp_path, (), 10)
    assert [origin.CHILD_VAR in e for e in envs] == [True, False]
    assert all(origin.SOURCE_VAR in e for e in envs)  # the test's own Python is watched either way
