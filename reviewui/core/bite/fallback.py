"""The one way an item runs on its own: alone, in a fresh scratch at the head.

Items the plan did not batch run here, and so does everything a batch
session gave back (a fork that could not apply its edit, a session that did
not run, tail guards no session took): every path of every executor ends in
`run_alone` when it cannot grade an item exactly. A control runs here as the
item it mirrors would (control.py). A cancelled sweep grades what had not
started `skipped` ("cancelled").
"""

from __future__ import annotations

from reviewui.core.bite import origin
from reviewui.core.bite.control import ControlResult, judge
from reviewui.core.bite.inert_edit import null_bytes
from reviewui.core.bite.executor import Result, SweepJob
from reviewui.core.bite.guard_check import run_job
from reviewui.core.bite.plan import ControlItem, GuardItem, Item, RevertItem
from reviewui.core.bite.report import HunkResult
from reviewui.core.revert import RevertError
from reviewui.core.bite.revert_grade import grade_revert, hunk_result
from reviewui.core.run.staging import write_loose
from reviewui.core.errors import ReviewError
from reviewui.core.run.scratch_build import commit_scratch
from reviewui.core.run.worktree import WorktreePool


def run_alone(pool: WorktreePool, job: SweepJob, item: Item) -> Result:
    """Grade `item` on its own in a scratch from `pool`, checked out afresh at the head."""
    if isinstance(item, GuardItem):
        return (item.job, run_job(pool, job.target, item.job, job.ctx, job.per_run))
    if isinstance(item, ControlItem):
        return control_alone(pool, job, item)
    return revert_alone(pool, job, item)


def revert_alone(pool: WorktreePool, job: SweepJob, item: RevertItem) -> HunkResult:
    """Revert one hunk in a fresh scratch, run its tests, grade the run."""
    h, f = item.hunk, item.file
    if job.ctx.cancel is not None and job.ctx.cancel.is_set():
        return hunk_result(h, "skipped", reason="cancelled")
    with pool.acquire() as scratch:
        try:
            scratch.checkout(job.target.head)
            path = scratch.path / f.path
            before = path.read_bytes() if path.is_file() else b""
            scratch.revert_hunk(f, h)
            scratch.hide_new_objects()  # every run alone: the pristine's loose objects and a pack no test can name
            after = path.read_bytes() if path.is_file() else b""
            seen = job.ctx.run(scratch.path, item.tests, job.per_run, extra=origin.QUIET_STOP)
        except RevertError as e:
            return hunk_result(h, "error", reason=f"revert could not be applied: {e}")
        except ReviewError as e:
            return hunk_result(h, "error", reason=f"runner failed: {e}")
        return grade_revert(job.diff, f, h, seen, item.tests, scratch.path, before, after, job.ctx.pytest_mode)


def control_alone(pool: WorktreePool, job: SweepJob, item: ControlItem) -> ControlResult:
    """Run one control as the item it mirrors runs alone: its file rewritten with its own code
    (inert_edit.null_bytes) and committed (a file the head lacks: the tree committed as it is), its tests run."""
    if job.ctx.cancel is not None and job.ctx.cancel.is_set():
        return ControlResult(item.shape, item.tests, ran=False)
    with pool.acquire() as scratch:
        try:
            scratch.checkout(job.target.head)
            path = scratch.path / item.file.path
            if path.is_file() and not path.is_symlink():
                null = null_bytes(scratch, item.file.path, path.read_bytes())
                files: dict[str, bytes | None] = {item.file.path: null}
                scratch.edit_files({item.file.path: null})
                write_loose(scratch.path, files)  # as many loose objects as a revert's commit leaves
            else:
                commit_scratch(scratch.path)
            scratch.hide_new_objects()
            extra = origin.QUIET_STOP if item.shape == "revert" else None
            seen = job.ctx.run(scratch.path, item.tests, job.per_run, extra=extra)
        except ReviewError as e:
            return ControlResult(item.shape, item.tests, (f"runner failed: {e}",))
        return judge(seen, item.shape, item.tests, item.file.path)
