"""A hunk revert's run turned into its HunkResult (shared by one-run reverts and batched ones)."""

from __future__ import annotations

from pathlib import Path
from typing import Unpack

from reviewui.core.bite.crosshunk import needed_by_revert, removed_by_revert, user_of
from reviewui.core.bite.grade import defined_names, grade_exit_code, grade_pytest, referenced_name
from reviewui.core.bite.guard_check import GuardFields
from reviewui.core.bite.report import HunkResult, Verdict
from reviewui.core.bite.runctx import Observation
from reviewui.core.diff import Diff
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk


class HunkFields(GuardFields, total=False):
    """The HunkResult fields a check fills beyond the hunk and its verdict (a guard's, and more)."""

    passed_tests: tuple[str, ...]


def hunk_result(h: Hunk, verdict: Verdict, **kw: Unpack[HunkFields]) -> HunkResult:
    """A HunkResult for `h` with `verdict` and the given fields."""
    return HunkResult(file=h.file, index=h.index, header=h.header, text=h.text, verdict=verdict, **kw)


def grade_revert(diff: Diff, f: FileDiff, h: Hunk, seen: Observation, tests: tuple[str, ...], scratch: Path,
                 before: bytes, after: bytes, pytest_mode: bool) -> HunkResult:
    """Grade the run of `h` reverted (`before`/`after`: the file's bytes at head and reverted)."""
    run = seen.run
    # Say `coder/history.py`, not the scratch worktree's absolute path under the cache dir.
    root = str(scratch).rstrip("/") + "/"

    def rel(text: str) -> str:
        return text.replace(root, "")

    passed = tuple(t.id for t in run.tests if t.outcome == "passed")
    if seen.foreign:
        return hunk_result(h, "broken", reason=seen.foreign, seconds=run.seconds, output=rel(run.output),
                           tests_run=tests)
    head_text, reverted_text = before.decode("utf-8", "replace"), after.decode("utf-8", "replace")
    # What the revert removes and needs matters only to a failure about a name (grade._excused, or a
    # failed command's output): the two modules are parsed only when some failure may be one (a parse
    # of each per revert was most of a big sweep's grading).
    about_a_name = any(referenced_name(t) is not None for t in run.failing) if pytest_mode else bool(run.returncode)
    is_py = f.path.endswith(".py") and about_a_name
    removed = removed_by_revert(head_text, reverted_text) if is_py else None
    names = defined_names(f, h) | (removed.all if removed else frozenset())
    if pytest_mode:
        needed = needed_by_revert(head_text, reverted_text) if is_py else frozenset()
        g = grade_pytest(run, names, lambda n: user_of(n, diff, h), needed)
    elif run.returncode:
        g = grade_exit_code(run, names, lambda n: user_of(n, diff, h))
    else:
        g = grade_exit_code(run)
    return hunk_result(
        h, g.verdict, failing_tests=g.failing_tests, messages={k: rel(v) for k, v in g.messages.items()},
        reason=rel(g.reason), seconds=run.seconds, output=rel(run.output), tests_run=tests, passed_tests=passed,
        run_readers=seen.observed.readers(f.path),
    )
