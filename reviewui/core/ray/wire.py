"""What crosses between the driver and a Ray node: plain picklable records, and their rebuilding.

A plan's items hold FileDiffs, which hold their Diff (locks, lazy git
reads of the reviewer's repository): they cannot be pickled, and a node has
no such repository anyway. So the driver sends a `DiffWire` (every file's
fields and raw patch, read once) and items that name their file by its index
in the diff; the node rebuilds one Diff of its own and resolves every item
against it. Guards travel with their index in the plan's guard list
(`SweepPlan.guard_jobs()`), and come back as that index (a control's
result, plain data, as it is):
the driver hands run_bite the plan's own GuardJob objects (GuardJoin matches
them by identity).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewui.core.bite.guard_check import BatchGuard
from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.origin import ChangedModule
from reviewui.core.bite.control import ControlResult
from reviewui.core.bite.plan import ControlItem, GuardItem, Item, RevertItem, SessionItem
from reviewui.core.bite.report import HunkResult
from reviewui.core.config import Settings
from reviewui.core.diff import Diff
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk

_FILE_FIELDS = tuple(f.name for f in dataclasses.fields(FileDiff) if f.name != "_diff")


@dataclass(frozen=True)
class DiffWire:
    """A Diff as data: each file's fields and raw patch, and the paths whose patch is never loaded."""

    base: str
    files: tuple[dict[str, Any], ...]
    patches: tuple[bytes, ...]
    not_shown: dict[str, str]

    @staticmethod
    def of(diff: Diff) -> DiffWire:
        """`diff` read whole (its patches loaded once)."""
        files = diff.files
        return DiffWire(diff.base, tuple({k: getattr(f, k) for k in _FILE_FIELDS} for f in files),
                        tuple(b"" if f.over_cap else f.raw_patch for f in files), dict(diff.not_shown()))

    def rebuild(self, repo_dir: Path, head: str) -> Diff:
        """A Diff of the node's repository with these files and patches (it never runs git for them)."""
        diff = Diff(str(repo_dir), self.base, head)
        files = [FileDiff(**fields, _diff=diff) for fields in self.files]
        diff._files = tuple(files)
        diff._patches = {f.path: p for f, p in zip(files, self.patches, strict=True)}
        diff._not_shown = dict(self.not_shown)
        return diff


@dataclass(frozen=True)
class RevertWire:
    """A hunk revert, its file named by index in the diff."""

    file: int
    hunk: Hunk
    tests: tuple[str, ...]


@dataclass(frozen=True)
class GuardWire:
    """A guard run alone, with its index in the plan's guard list."""

    index: int
    job: GuardJob


@dataclass(frozen=True)
class BatchWire:
    """A batchable guard, with its index in the plan's guard list."""

    index: int
    guard: BatchGuard


@dataclass(frozen=True)
class ControlWire:
    """A control, its file named by index in the diff (a null guard travels whole: it is no plan job)."""

    file: int
    tests: tuple[str, ...]
    shape: str
    guard: BatchGuard | None


@dataclass(frozen=True)
class SessionWire:
    """One batch session's share of the plan."""

    slot: int
    reverts: tuple[RevertWire | ControlWire, ...]
    guards: tuple[BatchWire | ControlWire, ...]


ItemWire = RevertWire | GuardWire | ControlWire


@dataclass(frozen=True)
class NodeSpec:
    """What every item a node runs needs besides itself (a SweepJob and RunContext, as data)."""

    argv: list[str]
    user_env: dict[str, str]
    modules: list[ChangedModule]
    settings: Settings
    data_files: tuple[str, ...]
    checkout_dirs: tuple[str, ...]
    suite: tuple[str, ...]
    quarantined: tuple[str, ...]
    per_run: float
    diff: DiffWire
    head_tests: tuple[str, ...] = ()
    """Every test the plan's items run (() is the whole suite): green at the head on each node
    before its grades count (Node.control)."""


@dataclass(frozen=True)
class NodeShare:
    """The part of a plan dealt to one node up front: its sessions and their tail."""

    sessions: tuple[SessionWire, ...]
    tail: tuple[BatchWire, ...]


HunkBack = HunkResult
GuardBack = tuple[int, GuardResult]
Back = HunkBack | GuardBack | ControlResult
"""One result as a node returns it: a hunk's result, (guard index, guard result), or a control's."""


class Encoder:
    """The driver's side: plan items to wire records, returned results to the plan's own objects."""

    def __init__(self, diff: Diff, jobs: list[GuardJob]) -> None:
        self._files = {id(f): n for n, f in enumerate(diff.files)}
        self._paths = {f.path: n for n, f in enumerate(diff.files)}
        self.jobs = jobs
        self._index = {id(j): n for n, j in enumerate(jobs)}

    def index(self, job: GuardJob) -> int:
        """`job`'s place in the plan's guard list."""
        return self._index[id(job)]

    def revert(self, item: RevertItem) -> RevertWire:
        n = self._files.get(id(item.file), self._paths.get(item.file.path))
        assert n is not None, f"{item.file.path} is not in the sweep's diff"
        return RevertWire(n, item.hunk, item.tests)

    def control(self, c: ControlItem) -> ControlWire:
        n = self._files.get(id(c.file), self._paths.get(c.file.path))
        assert n is not None, f"{c.file.path} is not in the sweep's diff"
        return ControlWire(n, c.tests, c.shape, c.guard)

    def item(self, item: Item) -> ItemWire:
        """One item run alone, as data."""
        if isinstance(item, GuardItem):
            return GuardWire(self.index(item.job), item.job)
        if isinstance(item, ControlItem):
            return self.control(item)
        return self.revert(item)

    def batch(self, g: BatchGuard) -> BatchWire:
        return BatchWire(self.index(g.job), g)

    def session(self, s: SessionItem) -> SessionWire:
        """One session, as data."""
        return SessionWire(s.slot, tuple(self.control(r) if isinstance(r, ControlItem) else self.revert(r)
                                         for r in s.reverts),
                           tuple(self.control(g) if isinstance(g, ControlItem) else self.batch(g) for g in s.guards))

    def back(self, r: Back) -> HunkResult | tuple[GuardJob, GuardResult] | ControlResult:
        """A node's result as run_bite takes it (a guard's with the plan's own job object)."""
        if isinstance(r, (HunkResult, ControlResult)):
            return r
        return (self.jobs[r[0]], r[1])


class Decoder:
    """The node's side: wire records to plan items of its own Diff, results to indexes."""

    def __init__(self, diff: Diff) -> None:
        self.diff = diff
        self._index: dict[int, int] = {}

    def revert(self, w: RevertWire) -> RevertItem:
        return RevertItem(self.diff.files[w.file], w.hunk, w.tests)

    def control(self, w: ControlWire) -> ControlItem:
        return ControlItem(self.diff.files[w.file], w.tests, w.shape, w.guard)

    def item(self, w: ItemWire) -> Item:
        """One item to run alone."""
        if isinstance(w, GuardWire):
            self._index[id(w.job)] = w.index
            return GuardItem(w.job)
        if isinstance(w, ControlWire):
            return self.control(w)
        return self.revert(w)

    def batch(self, w: BatchWire) -> BatchGuard:
        self._index[id(w.guard.job)] = w.index
        return w.guard

    def session(self, w: SessionWire) -> SessionItem:
        """One session of this node's share."""
        return SessionItem(w.slot, tuple(self.control(r) if isinstance(r, ControlWire) else self.revert(r)
                                         for r in w.reverts),
                           tuple(self.control(g) if isinstance(g, ControlWire) else self.batch(g) for g in w.guards))

    def back(self, r: HunkResult | tuple[GuardJob, GuardResult] | ControlResult) -> Back:
        """A result as the driver maps it back (a guard by its index)."""
        if isinstance(r, (HunkResult, ControlResult)):
            return r
        return (self._index[id(r[0])], r[1])
