"""Evidence per hunk: a sweep reuses each hunk's and each guard's grade while what decides it is unchanged.

Every hunk revert and guard a sweep plans to run gets a key (`Grades.hunk_key`,
`Grades.guard_key`): a digest of everything its grade is a function of, as
far as reviewui can tell, and more when it cannot:

- the sweep's context: the test command as run (its `VAR=value` words too), the
  trusted settings, the environment and reviewui's version (the caller's
  `GradeBook.context`); the import dirs in the reviewer's checkout, the tests
  quarantined at the head;
- the item: the hunk's header and text (a guard: its edit, line and columns,
  and its hunk's), and its file's content at the head;
- the tests its run names (chosen by this sweep's own baseline and coverage
  map, so a test that now reaches the hunk changes the key);
- what those tests can read (reach.py): their files, the conftests above
  them, every module they import, statically and transitively (the edited
  file's own imports included, before and after the edit), every file that is
  not Python; the whole tree when imports cannot bound it; and the changed
  modules among them whose origin every run checks;
- for a hunk, every added line of the branch's other code hunks that names a
  word the revert takes away (the cross-hunk grading asks whether another hunk
  uses it: revert_grade.py).

The baseline, the instrument check and the controls always run: nothing is
reused unless this sweep's own baseline is green and its checks pass, and the
tests of each item are this sweep's choice. Only `bites`, `toothless` and
`broken` grades are kept; a timeout, an error or a cancelled run is run again.
`--fresh` reads nothing (and keeps what it grades).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Protocol, Sequence

from reviewui.core.bite.guard_check import GuardJob
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.reach import EVERYTHING, Reach, read_tree
from reviewui.core.bite.report import HunkResult
from reviewui.core.diff import Diff
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk
from reviewui.core.revert import RevertError, raw_hunk_for, revert_bytes

if TYPE_CHECKING:
    from reviewui.core.bite.head_files import HeadFiles
    from reviewui.core.bite.prepare import HunkPlan
    from reviewui.core.bite.runctx import RunContext
    from reviewui.core.target import Target

KEY_VERSION = 1
"""Bumped when what a key holds changes: every grade kept before is then unknown."""
KEPT = frozenset({"bites", "toothless", "broken"})
"""The verdicts kept for reuse (others are run again)."""
_WORD = re.compile(r"[A-Za-z_]\w*")

Grade = HunkResult | GuardResult


class GradeBook(Protocol):
    """Where grades are kept between sweeps by their key (the evidence store's, core/store/grades.py)."""

    @property
    def context(self) -> str:
        """A digest of what decides every grade besides the sweep's own inputs (settings, environment, version)."""
        ...

    @property
    def read(self) -> bool:
        """False with `--fresh`: nothing is reused (what is graded is still kept)."""
        ...

    def get(self, keys: Sequence[str]) -> dict[str, Grade]:
        """The grades kept under `keys` (those that are)."""
        ...

    def put(self, grades: Sequence[tuple[str, Grade]]) -> None:
        """Keep `grades` under their keys."""
        ...


class Grades:
    """One sweep's keys, what it reused, and keeping what it graded (see the module docstring)."""

    def __init__(self, book: GradeBook, target: Target, diff: Diff, head: HeadFiles, ctx: RunContext,
                 tag: str = "") -> None:
        self.book = book
        self._tag = tag
        self._diff = diff
        self._head = head
        self._reach = Reach(read_tree(str(target.repo_dir), target.head), head.raw)
        self._ctx = ctx
        self._lines = [(f.path, h.key, ln.new_no, ln.text, frozenset(_WORD.findall(ln.text)))
                       for f in diff.files if _code(f) for h in f.hunks for ln in h.lines if ln.kind == "added"]
        self.keys: dict[tuple[str, int] | tuple[str, int, str], str] = {}
        """(file, hunk) or (file, hunk, guard ident) -> the key of each planned item."""
        self.reused: dict[tuple[str, int] | tuple[str, int, str], Grade] = {}
        """The same -> the grade reused for it."""

    def sweep_part(self) -> str:
        """What decides every grade of this sweep (see the module docstring)."""
        c = self._ctx
        return _digest([KEY_VERSION, self.book.context, c.argv, sorted(c.user_env.items()), c.pytest_mode,
                        list(c.checkout_dirs), sorted(c.quarantined), self._tag])

    def _reach_of(self, tests: tuple[str, ...], sources: list[tuple[str, bytes | None]]) -> list[object]:
        """The digest of what runs of `tests` can read, and the changed modules among it whose origin every
        run checks (a run importing one from outside the scratch is `broken`)."""
        files = self._reach.closure(tests, sources)
        mods = [(m.path, m.name, m.root) for m in self._ctx.modules if files == EVERYTHING or m.path in files]
        return [self._reach.digest(files), mods]

    def hunk_key(self, f: FileDiff, h: Hunk, tests: tuple[str, ...], sweep: str) -> str:
        """The key of `h`'s revert run with `tests`."""
        before = self._head.raw(f.path)
        try:
            after: bytes | None = revert_bytes(before, raw_hunk_for(f, h)) if before is not None else None
        except RevertError:
            after = None
        words = _taken_away(f, h, before, after)
        users = [(p, n, t) for p, k, n, t, ws in self._lines if k != h.key and ws & words]
        reach = self._reach_of(tests, [(f.path, before), (f.path, after)] if f.path.endswith(".py") else [])
        return _digest(["hunk", sweep, f.path, f.new_blob, h.header, h.text, list(tests), reach, users])

    def guard_key(self, job: GuardJob, h: Hunk, sweep: str) -> str:
        """The key of one guard's run."""
        g = job.guard
        f = self._diff.file(g.file)
        edited = g.source.encode("utf-8")
        reach = self._reach_of(job.tests, [(g.file, self._head.raw(g.file)), (g.file, edited)])
        return _digest(["guard", sweep, g.file, f.new_blob if f else "", h.header, h.text, g.line, g.kind,
                        g.description, list(g.start), list(g.end), g.replacement, sorted(g.names),
                        hashlib.sha256(edited).hexdigest(), job.selection.choice, list(job.tests), reach])

    def split(self, targets: list[tuple[FileDiff, Hunk]], plans: dict[tuple[str, int], HunkPlan],
              jobs: list[GuardJob]) -> tuple[list[tuple[FileDiff, Hunk]], list[GuardJob],
                                             list[HunkResult], list[tuple[GuardJob, GuardResult]]]:
        """(the targets and guard jobs still to run, the hunk and guard grades reused). Hunks known without
        a run (uncovered) are never looked up: they cost nothing."""
        sweep = self.sweep_part()
        hunks = {h.key: h for _, h in targets}
        for f, h in targets:
            if not plans[h.key].uncovered:
                self.keys[h.key] = self.hunk_key(f, h, plans[h.key].tests, sweep)
        for job in jobs:
            owner = hunks.get((job.guard.file, job.guard.hunk))
            if owner is not None and job.selection.choice != "uncovered":
                self.keys[_gkey(job)] = self.guard_key(job, owner, sweep)
        found = self.book.get(list(self.keys.values())) if self.book.read else {}
        hunk_out: list[HunkResult] = []
        left: list[tuple[FileDiff, Hunk]] = []
        for f, h in targets:
            got = found.get(self.keys.get(h.key, ""))
            if isinstance(got, HunkResult):
                plan = plans[h.key]
                hr = replace(got, file=h.file, index=h.index, header=h.header, text=h.text, guards=(),
                             tests_run=plan.tests, scope=plan.scope or got.scope, evidence="reused")
                self.reused[h.key] = hr
                hunk_out.append(hr)
            else:
                left.append((f, h))
        guard_out: list[tuple[GuardJob, GuardResult]] = []
        run: list[GuardJob] = []
        for job in jobs:
            got = found.get(self.keys.get(_gkey(job), ""))
            if isinstance(got, GuardResult):
                g = job.guard
                gr = replace(got, file=g.file, hunk=g.hunk, line=g.line, start=g.start, end=g.end,
                             replacement=g.replacement, evidence="reused")
                self.reused[_gkey(job)] = gr
                guard_out.append((job, gr))
            else:
                run.append(job)
        return left, run, hunk_out, guard_out

    def keep(self, results: Iterable[HunkResult]) -> None:
        """Keep every fresh grade worth keeping (KEPT) of a finished sweep under its key."""
        out: list[tuple[str, Grade]] = []
        for r in results:
            key = self.keys.get(r.key)
            if key is not None and r.evidence == "fresh" and r.verdict in KEPT and r.reason != "cancelled":
                out.append((key, replace(r, guards=())))
            for g in r.guards:
                key = self.keys.get((g.file, g.hunk, f"{g.line}:{g.kind}:{g.start[1]}:{g.replacement}"))
                if key is not None and g.evidence == "fresh" and g.verdict in KEPT and g.reason != "cancelled":
                    out.append((key, g))
        if out:
            self.book.put(out)


def _gkey(job: GuardJob) -> tuple[str, int, str]:
    return (job.guard.file, job.guard.hunk, job.guard.ident)  # ident: `line:kind:column:replacement`


def _code(f: FileDiff) -> bool:
    """A file whose added lines the cross-hunk grading reads (crosshunk.user_of's choice)."""
    from reviewui.core.bite.selection import is_not_code

    return f.role != "test" and not f.binary and not is_not_code(f.path)


def _taken_away(f: FileDiff, h: Hunk, before: bytes | None, after: bytes | None) -> frozenset[str]:
    """The names the grading of `h`'s revert excuses a failure about, as revert_grade.grade_revert makes them:
    what its added lines define, and what the revert removes from the module (crosshunk.removed_by_revert).
    A failure about one is a bite only while no other code hunk uses it, so those uses are in the key."""
    from reviewui.core.bite.crosshunk import removed_by_revert
    from reviewui.core.bite.grade import defined_names

    words = set(defined_names(f, h))
    if before is not None and after is not None and f.path.endswith(".py"):
        removed = removed_by_revert(before.decode("utf-8", "replace"), after.decode("utf-8", "replace"))
        words |= set(removed.all) if removed is not None else set()
    return frozenset(words | {part for w in words for part in w.split(".")})  # `pkg.mod`: a use names its parts


def _digest(parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8", "surrogateescape")).hexdigest()
