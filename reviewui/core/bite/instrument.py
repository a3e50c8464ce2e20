"""The instrument check: before any revert is graded, prove the test command can fail on this code.

A command that cannot report a failure (a wrapper that always exits 0, a
pytest whose JUnit report goes elsewhere) would make every hunk toothless;
tests that import the changed code from somewhere other than the scratch
would too. Both are caught once per sweep, and the sweep then learns
nothing (exit 3) instead of calling every hunk toothless.
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath
from typing import Sequence

from reviewui.core.bite.baseline import error_lines
from reviewui.core.bite.origin import QUIET_STOP, ChangedModule
from reviewui.core.bite.revert_batch import Edit, ForkSession
from reviewui.core.bite.runctx import RunContext
from reviewui.core.bite.selection import is_test_file
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk
from reviewui.core.errors import ReviewError
from reviewui.core.git import list_files
from reviewui.core.run.runner import RunFiles, RunResult
from reviewui.core.run.scratch import Scratch
from reviewui.core.target import Target

INSTRUMENT_TEST = 'def test_reviewui_instrument():\n    assert False, "reviewui instrument check: this test must fail"\n'
GARBAGE = b")(}{ reviewui instrument check: this file is deliberately broken ][\n"


class UntrustedCommand(ReviewError):
    """The test command failed the instrument check or a control: nothing it says can be believed (exit 3)."""

    exit_code = 3  # a refusal wherever it surfaces (`verdict --with-bites` too), as `bite` says it

    def __init__(self, message: str, tests: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.tests = tuple(tests)
        """The node ids that made it untrusted (those that can tell a revert run from the baseline), if any."""


def instrument_check(
    scratch: Scratch, target: Target, ctx: RunContext, selected: tuple[str, ...],
    targets: list[tuple[FileDiff, Hunk]], limit: float, imported: list[ChangedModule],
    pytest_checked: bool = False, garbage_passed: bool | None = None,
) -> None:
    """Raise UntrustedCommand unless the command demonstrably reports a failure (the warm runner included).

    For pytest, also: the changed modules the baseline imported, replaced by
    garbage, must make the selected tests fail; else what the tests exercise
    is not the scratch's code, and no revert could show anything.
    `pytest_checked` says pytest's half already passed, and `garbage_passed`
    (when not None) is what `garbage_passes` said of every changed module,
    both run beside the baseline in another slot (`side_checks`).
    """
    if ctx.pytest_mode and pytest_checked and (not imported or garbage_passed is not None):
        # Both halves ran beside the baseline: nothing runs here, so the scratch needs no reset
        # (whoever takes the slot next checks it out afresh).
        if imported and garbage_passed:
            raise _garbage_not_seen(imported)
        return
    scratch.reset()
    try:
        if ctx.pytest_mode:
            if not pytest_checked:
                _pytest_instrument_check(scratch, target, ctx, selected, limit)
            if not imported:
                return
            if garbage_passed is None:
                scratch.reset()
                garbage_passed = garbage_passes(scratch, ctx, selected, limit, imported)
            if garbage_passed:
                raise _garbage_not_seen(imported)
            return
        files = sorted({f.path for f, _ in targets if f.status != "deleted"})
        if not files:
            return
        for path in files:
            scratch.add_file(path, GARBAGE)
        run = ctx.run(scratch.path, selected, limit).run
        if run.returncode == 0:
            raise UntrustedCommand(
                "the test command cannot be trusted: it still exits 0 with every changed source file "
                "replaced by garbage (it cannot fail, or does not exercise the change); check --test-cmd"
            )
    finally:
        scratch.reset()


def _garbage_not_seen(imported: list[ChangedModule]) -> UntrustedCommand:
    names = ", ".join(m.name for m in imported)
    return UntrustedCommand(
        f"the tests imported {names} in the baseline, yet still pass with it replaced by garbage: the "
        "code they exercise is not the scratch's (a subprocess or import hook loading another copy?); "
        "check --test-cmd"
    )


def garbage_passes(scratch: Scratch, ctx: RunContext, selected: tuple[str, ...], limit: float,
                   modules: list[ChangedModule]) -> bool:
    """True when the selected tests still pass with `modules` replaced by garbage in the scratch (left so).

    Any changed module the tests import makes them fail when it is garbage,
    so garbage in every changed module (before the baseline says which are
    imported) answers as garbage in only the imported ones would.
    """
    scratch.edit_files({m.path: GARBAGE for m in modules})
    # One failure answers the question: pytest stops at the first (each collection error of a
    # garbage import costs it ~60 ms of report), and the exit code says the same either way.
    run = ctx.run(scratch.path, selected, limit, argv=[*ctx.argv, "--maxfail=1"], extra=QUIET_STOP).run
    return run.returncode == 0 and not run.killed


def side_checks(scratch: Scratch, target: Target, ctx: RunContext, selected: tuple[str, ...], limit: float,
                *, fresh: bool = False) -> bool | None:
    """Both halves beside the baseline, in one pytest start-up: raises UntrustedCommand for
    pytest's half, then returns what `garbage_passes` would of every changed module (None:
    there is none). The scratch is left as the runs left it: every run of the sweep checks
    its slot out afresh first (a copy less beside the baseline).

    pytest's half is an ordinary run of the instrument test, session end and exit code
    included (what it checks may be done there). Before that run collects, one fork of it
    collects the selected tests with every changed module garbage (revert_batch_child.py):
    the garbage half, which asks only whether they fail. What the fork could not answer runs
    on its own. `fresh`: the scratch is a clean copy of the head already.
    """
    if not fresh:
        scratch.checkout(target.head)  # the branch's own pytest configuration is what is being tested
    rel = _instrument_path(target, selected)
    # A fork collects only the tests it names: a whole-suite run leaves pytest to choose its paths.
    batched = bool(ctx.modules and selected)
    forks = ForkSession([Edit({m.path: GARBAGE for m in ctx.modules}, selected, maxfail=1)] if batched else [], limit)
    scratch.add_file(rel, INSTRUMENT_TEST)
    # Without a fork to make, the run is the plain instrument run (no plugin walking the tree).
    forking = RunFiles(lambda d: forks.setup(d, scratch), forks.collect) if batched else None
    run = ctx.run(scratch.path, [rel], limit, in_run_dir=forking).run
    if f"{rel}::test_reviewui_instrument" not in {t.id for t in run.tests} and not run.killed:
        # Not reported: refused below, unless the fork left the tree changed and the run
        # collected nothing for that (revert_batch_child.py); on its own it is certain.
        scratch.reset()
        _pytest_instrument_check(scratch, target, ctx, selected, limit)
    else:
        _judge_instrument(run, rel)
    if not ctx.modules:
        return None
    garbage = forks.forked[0].run if batched else None
    if garbage is not None:
        return garbage.returncode == 0 and not garbage.killed
    if ctx.cancel is not None and ctx.cancel.is_set():
        return None  # stopped meanwhile (the baseline is not green, or the sweep was cancelled): no run more
    scratch.reset()
    return garbage_passes(scratch, ctx, selected, limit, ctx.modules)


def _instrument_path(target: Target, selected: tuple[str, ...]) -> str:
    folder = _test_folder(target, selected)
    return f"{folder}/test_reviewui_instrument_{os.getpid()}.py".lstrip("/")


def _pytest_instrument_check(scratch: Scratch, target: Target, ctx: RunContext, selected: tuple[str, ...],
                             limit: float) -> None:
    rel = _instrument_path(target, selected)
    scratch.add_file(rel, INSTRUMENT_TEST)
    _judge_instrument(ctx.run(scratch.path, [rel], limit).run, rel)


def _judge_instrument(run: RunResult, rel: str) -> None:
    """Raise UntrustedCommand unless `run` reported the instrument test at `rel` as failed."""
    node = f"{rel}::test_reviewui_instrument"
    seen = {t.id: t.outcome for t in run.tests}
    if run.killed:
        return
    if run.returncode == 0 or seen.get(node) != "failed":
        what = seen.get(node, "not reported at all")
        tail = error_lines(run.output, 3).replace("\n", " | ")
        raise UntrustedCommand(
            f"the test command cannot be trusted: a deliberately failing test ({node}) was "
            f"{what} with exit code {run.returncode}{' (' + tail + ')' if tail else ''}; check --test-cmd"
        )


def _test_folder(target: Target, selected: tuple[str, ...]) -> str:
    """Where the instrument test goes: beside the first selected test, else beside any test."""
    candidates = list(selected) or [p for p in list_files(target.repo_dir, target.head) if is_test_file(p)]
    if not candidates:
        return ""
    parent = str(PurePosixPath(candidates[0]).parent)
    return "" if parent == "." else parent
