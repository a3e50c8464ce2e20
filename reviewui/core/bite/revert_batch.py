"""Grade many hunk reverts in one configured pytest session (revert_batch_child.py does the work inside the run).

A hunk revert run on its own pays for a whole pytest start-up (plugins,
conftests, options) to collect a few modules, often only as far as their
first collection error. In a batch session pytest configures once and forks
per revert before collecting; each fork collects and runs the revert's
tests as a session of their own. Each revert is staged here first: its
reverted bytes, and the commit and index its scratch would have (so the
code under test sees the same git as in a revert run of its own). Graded
by revert_grade.grade_revert like any revert; what the batch cannot run
exactly (see the plugin) comes back to be run the ordinary way.

Only reverts of Python files other than conftest.py that name their tests
are batched: a config file or a conftest is read while pytest configures,
before any fork, and so are the paths of a run that names no test.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Callable, TypeVar

from reviewui.core import inside
from reviewui.core.bite import canary, origin
from reviewui.core.bite.inert_edit import null_bytes
from reviewui.core.bite.report import HunkResult
from reviewui.core.revert import RevertError, raw_hunk_for, revert_bytes
from reviewui.core.bite.revert_grade import grade_revert, hunk_result
from reviewui.core.run.staging import Stager
from reviewui.core.bite.runctx import Observation, RunContext
from reviewui.core.diff import Diff
from reviewui.core.file_diff import FileDiff
from reviewui.core.hunks import Hunk
from reviewui.core.run import room, sandbox
from reviewui.core.run.junit import JUnitError, TestOutcome, parse_junit
from reviewui.core.run.junit import failures as junit_failures
from reviewui.core.run.runner import OUTPUT_CAP, RunResult
from reviewui.core.run.scratch_build import staged_commit, tree_mtime
from reviewui.core.run.scratch import Scratch
from reviewui.core.run.process import read_run_file, read_run_text

PLUGIN_MODULE = "reviewui_revert_batch"
CHILD = inside.source("revert_batch_child.py")
"""The plugin each session loads (copied, never imported here: it imports pytest, ~0.15 s)."""
REQUEST_VAR = "REVIEWUI_REVERT_BATCH"
"""Names the request file for the plugin (its own REQUEST_VAR)."""
Pending = tuple[FileDiff, Hunk, tuple[str, ...]]
"""A hunk to revert and the tests its run needs."""
G = TypeVar("G")


def batchable(pending: list[Pending]) -> tuple[list[Pending], list[Pending]]:
    """Split hunk reverts into those a batch session can run exactly and the rest."""
    batch: list[Pending] = []
    rest: list[Pending] = []
    for item in pending:
        path = PurePosixPath(item[0].path)
        # A run of the whole suite (no test named) lets pytest pick its paths as it configures.
        ok = path.suffix == ".py" and path.name != "conftest.py" and item[0].status != "deleted" and bool(item[2])
        (batch if ok else rest).append(item)
    return batch, rest


def deal(reverts: list[Pending], guard_chunks: list[list[G]], slots: int,
         files_of: Callable[[list[G]], set[str]] | None = None) -> tuple[list[tuple[list[Pending], list[G]]], list[Pending]]:
    """(reverts and guards of each batch session, reverts to run one by one).

    Every revert rides in a session, whatever the guard count: a session pays pytest's
    start-up once for all its reverts, and each fork then costs only its own collection and
    tests, where a revert run alone pays a scratch copy, the sandbox and pytest's start-up.
    The guards' sessions take the reverts first; slots without guards get sessions of
    reverts alone. With `files_of` (the files a chunk's
    guards edit), a revert goes to a session whose guards are in its file where the shares
    allow: their tests are mostly the same, and a session rewrites its test files once for
    its forks (revert_batch_child.py).
    """
    n = max(len(guard_chunks), min(slots, len(reverts)))
    if not n:
        return [], list(reverts)
    chunks: list[list[G]] = [*guard_chunks, *([] for _ in range(n - len(guard_chunks)))]
    if files_of is None:
        return [(reverts[i::n], chunks[i]) for i in range(n)], []
    room = -(-len(reverts) // n)
    dealt: list[list[Pending]] = [[] for _ in range(n)]
    files = [files_of(c) for c in chunks]
    for item in reverts:
        near = [i for i in range(n) if item[0].path in files[i] and len(dealt[i]) < room]
        dealt[min(near or range(n), key=lambda i: len(dealt[i]))].append(item)
    return [(dealt[i], chunks[i]) for i in range(n)], []


@dataclass
class Edit:
    """One fork of a batch session: the files written before it forks and the tests it collects."""

    files: dict[str, bytes | None]
    """Path -> the bytes the fork sees (None: the file is deleted)."""
    tests: tuple[str, ...]
    maxfail: int | None = None
    """pytest's --maxfail for the fork."""


@dataclass
class Forked:
    """What one fork of a batch session reported (all None: it did not run; run it the ordinary way)."""

    reply: dict[str, object] | None = None
    run: RunResult | None = None
    """The fork's run, its canary test taken out (canary.py)."""
    observed: origin.Observed | None = None
    tampered: str | None = None
    """Why the fork's reports cannot be believed (its canary did not fail), else None."""


class ForkSession:
    """Edits graded each in a fork of one configured pytest session (revert_batch_child.py).

    `setup` stages them in the scratch's run directory and returns the run's
    extra environment; `collect` reads what each fork reported into `forked`.
    Each edit is committed as the scratch's HEAD in its fork, as a revert run's edit is.
    """

    def __init__(self, edits: list[Edit], limit: float, *, collect: bool = True) -> None:
        self.edits = edits
        self.limit = limit
        self.collect_after = collect
        """False: after the forks the session collects nothing (no guards follow)."""
        self.forked: list[Forked] = [Forked() for _ in edits]
        self._place: room.Room | None = None

    def setup(self, run_dir: Path, scratch: Scratch) -> dict[str, str]:
        """Stage every edit (files, commit and index in `run_dir`); return the run's extra environment."""
        # The plugin is already beside the origin plugin, as in every run (origin.write_plugin);
        # every path in the request as the run sees it (run/room.py).
        place = self._place = sandbox.room_for_run(scratch.path, run_dir)
        seen_as = place.inside
        git = scratch.path / ".git"
        # Each fork's commit and index, written in Python (staging.py); through git where that cannot.
        stager = Stager.of(scratch.path) if self.edits else None
        if stager is not None:
            stager.store = run_dir  # each fork gets its own objects put in place by the child, no other's
        entries: list[dict[str, object]] = []
        for n, edit in enumerate(self.edits):
            here = run_dir / f"revert-{n}"
            here.mkdir()
            files: dict[str, str | None] = {}
            for k, (rel, content) in enumerate(edit.files.items()):
                files[rel] = None if content is None else seen_as(here / f"file-{k}")
                if content is not None:
                    (here / f"file-{k}").write_bytes(content)
            commit = stager.stage(edit.files, here / "index") if stager is not None else \
                staged_commit(scratch.path, edit.files, here / "index")
            entry: dict[str, object] = {"id": n, "files": files, "tests": list(edit.tests), "dir": seen_as(here),
                                        "index": seen_as(here / "index"), "commit": commit}
            if stager is not None:
                entry["objects"] = list(stager.made)
            if edit.maxfail:
                entry["maxfail"] = edit.maxfail
            entries.append(entry)
        request = {"timeout": self.limit, "scratch": seen_as(scratch.path), "reverts": entries,
                   "collect": self.collect_after,
                   "mtime_ns": tree_mtime(scratch.path),
                   "git": {"index": seen_as(git / "index"), "ref": seen_as(git / "refs" / "heads" / "scratch"),
                           "objects": seen_as(git / "objects"), "staged": seen_as(run_dir / "objects")}}
        (run_dir / "revert-batch.json").write_text(json.dumps(request), encoding="utf-8")
        return {"PYTHONPATH": str(run_dir / "plugin"), "PYTEST_PLUGINS": PLUGIN_MODULE,
                REQUEST_VAR: str(run_dir / "revert-batch.json")}

    def collect(self, run_dir: Path) -> None:
        """Read each fork's reply and reports before the run's directory goes."""
        for n, forked in enumerate(self.forked):
            here = run_dir / f"revert-{n}"
            try:
                forked.reply = json.loads(read_run_text(here / "reply.json") or "")
            except (OSError, ValueError):
                continue
            forked.observed = origin.read_observed(here / "origin.json")
            run = _run_result(here, forked.reply)
            if run is not None and self._place is not None:  # the paths the fork named, as the host's
                outside = self._place.outside
                run = replace(run, output=outside(run.output), tests=tuple(
                    replace(t, message=outside(t.message), detail=outside(t.detail)) for t in run.tests))
            if run is not None:
                run, forked.tampered = canary.judge(run, forked.observed)
            forked.run = run


Null = tuple[FileDiff, None, tuple[str, ...]]
"""A null revert (a control): the file rewritten with its own code (inert_edit.null_bytes), the tests run."""
Entry = Pending | Null
"""One fork of a revert session: a hunk revert, or a null one."""


class RevertSession:
    """The reverts of one batch session: staged in its scratch, then graded from the fork's reports.

    A null entry (a control) is staged and forked exactly as a revert is, its file's own code
    written (inert_edit.null_bytes); its run is left in `nulls` for the sweep's controls to judge (control.py).
    """

    def __init__(self, items: list[Entry], diff: Diff, limit: float, *, collect: bool = True) -> None:
        self.items = items
        self.diff = diff
        self.limit = limit
        self.collect_after = collect
        """False: the session collects nothing once its reverts are done (it has no guards)."""
        self._staged: list[tuple[int, bytes, bytes | None]] = []
        """Each entry staged: its place in `items`, the file at head, the file it forks with (None: deleted)."""
        self._forks = ForkSession([], limit)
        self.errors: list[HunkResult] = []
        """Reverts that could not even be applied (graded `error`, as a revert run would be)."""
        self.graded: list[HunkResult] = []
        """After the session: the reverts it graded."""
        self.nulls: list[tuple[int, Observation]] = []
        """After the session: each null entry's place in `items` and its run."""
        self.again: list[Entry] = list(items)
        """After the session: the entries to run the ordinary way (all of them until it ran)."""

    @property
    def tests(self) -> list[str]:
        """Every test the entries run: the session is configured with them, as their own runs would be."""
        return list(dict.fromkeys(t for _, _, tests in self.items for t in tests))

    def setup(self, run_dir: Path, scratch: Scratch) -> dict[str, str]:
        """Stage every entry (files, commit and index in `run_dir`); return the run's extra environment."""
        edits: list[Edit] = []
        for n, (f, h, tests) in enumerate(self.items):
            target = scratch.path / f.path
            before = target.read_bytes() if target.is_file() else b""
            if h is None:  # a null revert: the head's own code, written and committed as a revert's are
                null = null_bytes(scratch, f.path, before) if target.is_file() else before
                self._staged.append((n, before, null))
                edits.append(Edit({f.path: null} if target.is_file() else {}, tests))
                continue
            try:  # on the head's own bytes, padded again as the scratch pads what it writes (run/alike.py)
                out = revert_bytes(scratch.unpadded(f.path, before), raw_hunk_for(f, h))
            except RevertError as e:
                self.errors.append(hunk_result(h, "error", reason=f"revert could not be applied: {e}"))
                continue
            after = None if not out and f.status == "added" else scratch.padded(f.path, out)
            self._staged.append((n, before, after))
            edits.append(Edit({f.path: after}, tests))
        self._forks = ForkSession(edits, self.limit, collect=self.collect_after)
        return self._forks.setup(run_dir, scratch)

    def collect(self, run_dir: Path) -> None:
        """Read each fork's reply and reports before the run's directory goes."""
        self._forks.collect(run_dir)

    def grade(self, session: RunResult, scratch: Path, ctx: RunContext) -> None:
        """Grade what the session's forks ran (into `graded` and `nulls`); the rest stays in `again`."""
        self.graded = list(self.errors)
        self.again = []
        for (n, before, after), forked in zip(self._staged, self._forks.forked, strict=True):
            item = self.items[n]
            run = forked.run
            if run is None or forked.observed is None or (run.junit_error and not run.killed):
                self.again.append(item)
                continue
            run = replace(run, command=session.command, warm=session.warm, sandbox=session.sandbox)
            seen = Observation(run, forked.observed,
                               forked.tampered or origin.foreign(forked.observed.modules, scratch, ctx.modules,
                                                                           ctx.argv[0]))
            f, h, tests = item
            if h is None:
                self.nulls.append((n, seen))
                continue
            self.graded.append(grade_revert(self.diff, f, h, seen, tests, scratch, before, after or b"",
                                            pytest_mode=True))


def _run_result(here: Path, reply: dict[str, object]) -> RunResult | None:
    """The fork's run as the runner would have reported it, or None when it did not run (fallback)."""
    if "fallback" in reply:
        return None
    seconds = float(reply.get("seconds", 0.0))  # type: ignore[arg-type]
    raw = read_run_file(here / "output") or b""
    text = raw.decode("utf-8", "replace") if len(raw) <= 2 * OUTPUT_CAP else (
        raw[:OUTPUT_CAP].decode("utf-8", "replace") + "\n[... output cut ...]\n"
        + raw[-OUTPUT_CAP:].decode("utf-8", "replace"))
    if reply.get("timeout"):
        return RunResult(command=(), returncode=None, seconds=seconds, timed_out=True, output=text,
                         output_bytes=len(raw), pytest=True)
    code = int(reply.get("exit", 3))  # type: ignore[call-overload]
    tests: tuple[TestOutcome, ...] = ()
    junit_error = None
    try:
        tests = tuple(parse_junit(here / "junit.xml"))
    except JUnitError as e:
        junit_error = str(e)
    limit = sandbox.limit_reason(text, junit_failures(tests)) if code else None
    return RunResult(command=(), returncode=code, seconds=seconds, output=text, output_bytes=len(raw), pytest=True,
                     tests=tests, junit_error=junit_error, limit=limit)
