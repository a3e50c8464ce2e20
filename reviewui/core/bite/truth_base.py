"""The one extra run the truth table costs: the branch's tests on the base commit's source.

A scratch of the sweep's pool is checked out at the base, the branch's test
files (tests, conftest, test data) are laid over it, and the sweep's selected
tests are run there once, through the sweep's RunContext: the same sandbox,
environment, import roots and origin check as every bite run, and a fork of
the warm server when one serves the command. A run whose changed modules came
from outside the scratch (an editable install of the checkout) does not count.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from reviewui.core.bite.new_names import added_names
from reviewui.core.bite.origin import changed_modules, checkout_roots, split_env_words
from reviewui.core.bite.progress import ProgressSink
from reviewui.core.bite.report import BiteReport
from reviewui.core.bite.runctx import RunContext
from reviewui.core.bite.truth_table import ChangedTest, TruthTable, build_table, unavailable
from reviewui.core.config import Settings
from reviewui.core.diff import Diff
from reviewui.core.errors import ReviewError
from reviewui.core.git import list_files, show_file
from reviewui.core.run.junit import TestOutcome
from reviewui.core.run.runner import is_pytest_command, split_command
from reviewui.core.run.warm_runner import WarmPytest, warm_form
from reviewui.core.run.worktree import WorktreePool
from reviewui.core.target import Target

MAX_OVERLAY_BYTES = 64 * 1024 * 1024
"""The branch's test files laid over the base, in all; more is refused (the table is then unavailable)."""


def test_overlay(target: Target, diff: Diff) -> dict[str, bytes]:
    """The branch's added or changed test files (tests, conftest, test data) as the head has them.

    Raises ReviewError when they add up to more than MAX_OVERLAY_BYTES.
    """
    out: dict[str, bytes] = {}
    total = 0
    for f in diff.files:
        if f.role != "test" or f.status == "deleted":
            continue
        data = show_file(target.repo_dir, target.head, f.path)
        if data is None:
            continue
        total += len(data)
        if total > MAX_OVERLAY_BYTES:
            raise ReviewError(f"the branch's test files are larger than {MAX_OVERLAY_BYTES} bytes")
        out[f.path] = data
    return out


def truth_table(
    target: Target, diff: Diff, settings: Settings, changed: Sequence[ChangedTest], report: BiteReport, *,
    test_cmd: str | None = None, timeout: float | None = None, cancel: threading.Event | None = None,
    warm: WarmPytest | None = None, on_tests: ProgressSink | None = None,
) -> TruthTable:
    """The truth table of the branch: `report` (a finished sweep) gives the head, one run gives the base.

    Unavailable (with its reason) when the command is not pytest, the sweep's
    baseline did not run, or the base run could not be graded. Raises
    ReviewError when the command cannot start or a scratch cannot be made.
    """
    head, base = target.head, target.base
    command = test_cmd or settings.test_command
    user_env, argv = split_env_words(split_command(command))
    if not argv or not is_pytest_command(argv):
        return unavailable(head, base, "per-test outcomes need a pytest command")
    if report.baseline.status in ("broken", "timeout") or not report.baseline.tests:
        return unavailable(head, base, f"the head's tests did not run ({report.baseline.status}"
                           + (f": {report.baseline.reason})" if report.baseline.reason else ")"))
    overlay = test_overlay(target, diff)
    base_tree = set(list_files(target.repo_dir, base))
    modules = changed_modules([f.path for f in diff.files if f.role == "source" and f.path in base_tree
                               and f.path.endswith(".py")], base_tree)
    limit = timeout or settings.timeout or (10 * report.baseline.seconds + 30)
    work = Path(tempfile.mkdtemp(prefix="reviewui-truth-"))
    try:
        with WorktreePool(target.repo_dir, 1) as pool, pool.acquire() as scratch:
            use_warm = warm if warm is not None and settings.warm_runner and warm_form(argv) else None
            if use_warm is not None:
                use_warm.prestart([scratch.path])
            ctx = RunContext(argv, user_env, modules, settings, work, cancel, use_warm, (),
                             checkout_roots(argv[0], target.repo_dir), progress=on_tests)
            scratch.checkout(base)
            if overlay:
                scratch.edit_files(overlay)
            # A branch test file importing a new name cannot be collected on the base; pytest would then
            # run nothing at all, and every other test's outcome there is what the table is for.
            root = str(scratch.path).rstrip("/") + "/"
            obs = ctx.run(scratch.path, list(report.selected_tests), limit,
                          argv=[*argv, "--continue-on-collection-errors"], phase="base run")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    run = obs.run
    if run.cancelled:
        return unavailable(head, base, "cancelled")
    if run.timed_out:
        return unavailable(head, base, f"the base run timed out after {run.seconds:.1f}s")
    if obs.foreign:
        return unavailable(head, base, f"the base run does not count: {obs.foreign}")
    if not run.tests:
        why = run.junit_error or f"exit code {run.returncode}"
        return unavailable(head, base, f"the base run reported no test ({why})")
    return build_table(changed, report, [_unscratched(t, root) for t in run.tests], head=head, base=base,
                       base_seconds=run.seconds, new_names=added_names(target, diff))


def _unscratched(t: TestOutcome, root: str) -> TestOutcome:
    """`t` with the scratch's path cut out of its messages (they name repository paths)."""
    return replace(t, message=t.message.replace(root, ""), detail=t.detail.replace(root, ""))
