"""Grade many guard reverts in one pytest session (guard_batch_child.py does the work inside the run).

A guard run on its own pays for a whole pytest start-up and collection to
run a few tests for a one-token edit; with dozens of guards per function,
that start-up is nearly all of the time. A batch collects once and forks per
guard, swapping the edited function's code in. It is exact only for guards
whose line runs solely inside test bodies (coverage says so: nothing at
import or in fixtures sees the unedited code), inside a module-level function
or a method of a module-level class; every other guard, and any guard the
batch cannot apply, runs the ordinary way (guard_check.run_job). The same
session first runs the slot's hunk reverts, before it collects
(revert_batch.py).
"""

from __future__ import annotations

import ast
import json
import threading
from pathlib import Path
from typing import Callable

from reviewui.core.bounded import parse_python, parse_python_or_none
from reviewui.core.inside import guard_batch_child
from reviewui.core.run import sandbox
from reviewui.core.bite.grade import grade_pytest
from reviewui.core.bite.guard_check import BatchGuard, DefPath, GuardJob, result
from reviewui.core.bite.guard_report import GuardResult
from reviewui.core.bite.guard_tail import SOCKET_NAME, Tail, TailServer
from reviewui.core.bite.origin import ChangedModule, merge_env
from reviewui.core.bite.revert_batch import RevertSession
from reviewui.core.bite.runctx import RunContext
from reviewui.core.errors import ReviewError
from reviewui.core.run.junit import Outcome, TestOutcome
from reviewui.core.run.runner import RunFiles, RunResult
from reviewui.core.run.scratch import Scratch
from reviewui.core.run.worktree import WorktreePool
from reviewui.core.target import Target
from reviewui.core.run.process import read_run_text

PLUGIN_MODULE = "reviewui_guard_batch"
_OUTCOMES: dict[str, Outcome] = {"passed": "passed", "failed": "failed", "error": "error", "skipped": "skipped"}


def def_path(source: str, line: int) -> DefPath | None:
    """The classes and function enclosing `line` from the module down, or None when the line is
    not inside a module-level function or a method of a module-level class (possibly nested)."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):  # ValueError: null bytes, or over the analysis caps
        return None
    return _def_path_in(tree, line)


def _def_path_in(tree: ast.Module, line: int) -> DefPath | None:
    path: DefPath = []
    body: list[ast.stmt] = tree.body
    while True:
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.lineno <= line <= (n.end_lineno or n.lineno)), None)
        if node is None:
            return None
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        path.append((node.name, first, node.lineno))
        if isinstance(node, ast.ClassDef):
            body = node.body
            continue
        # A nested def or lambda may have been made before the swap (a decorator's wrapper at
        # import): its function object would keep the old code. Those run the ordinary way.
        nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
        if any(isinstance(n, nested) and n.lineno <= line <= (n.end_lineno or n.lineno)
               for n in ast.walk(node) if n is not node):
            return None
        return path


def batchable(jobs: list[GuardJob], modules: list[ChangedModule],
              head_text: Callable[[str], str | None] | None = None) -> tuple[list[BatchGuard], list[GuardJob]]:
    """Split guard jobs into those a batch can grade exactly and the rest.

    `head_text` (a file's text at head) lets each file be parsed once, not once per guard line
    (~20 ms a parse of a 2600-line file): a guard keeps its file's lines where they were and
    adds no def, class or lambda, so a function that encloses its line at head encloses it in
    the edited file too. Where the head has none, the edited file is asked, as without it.
    """
    by_path = {m.path: m.name for m in modules}
    paths: dict[tuple[str, int], DefPath | None] = {}
    trees: dict[str, ast.Module | None] = {}
    batch: list[BatchGuard] = []
    rest: list[GuardJob] = []
    for job in jobs:
        g = job.guard
        name = by_path.get(g.file)
        if job.selection.choice != "tests" or name is None:
            rest.append(job)
            continue
        key = (g.file, g.line)
        if key not in paths:
            if g.file not in trees:
                trees[g.file] = parse_python_or_none(head_text(g.file) if head_text is not None else None)
            tree = trees[g.file]
            found = _def_path_in(tree, g.line) if tree is not None else None
            paths[key] = found if found is not None else def_path(g.source, g.line)
        path = paths[key]
        if path is None:
            rest.append(job)
        else:
            batch.append(BatchGuard(job, name, path))
    return batch, rest



def split(guards: list[BatchGuard], n: int) -> list[list[BatchGuard]]:
    """`guards` dealt into at most `n` batches of about the same size, each in plan order.

    A file's guards stay together where the sizes allow: a session collects only the test
    modules its guards need, and those of one function are mostly the same.
    """
    n = max(1, min(n, len(guards)))
    if not guards:
        return []
    share = -(-len(guards) // n)
    order = {id(g): k for k, g in enumerate(guards)}
    groups: dict[str, list[BatchGuard]] = {}
    for g in guards:
        groups.setdefault(g.job.guard.file, []).append(g)
    batches: list[list[BatchGuard]] = [[] for _ in range(n)]
    for group in sorted(groups.values(), key=len, reverse=True):
        while group:
            light = min(batches, key=len)
            room = max(1, share - len(light))
            light += group[:room]
            group = group[room:]
    return [sorted(b, key=lambda g: order[id(g)]) for b in batches if b]


def run_batch(
    pool: WorktreePool, target: Target, ctx: RunContext, guards: list[BatchGuard], per_guard: float,
    cancel: threading.Event | None, reverts: RevertSession | None = None, tail: Tail | None = None,
) -> tuple[list[tuple[GuardJob, GuardResult]], list[GuardJob]]:
    """Grade `guards` in one pytest session in a scratch at head: (graded, to run the ordinary way).

    `reverts` are run in the same session first, before it collects (revert_batch.py); what
    they come to is left in that object. With a `tail`, the session collects its tests too
    and, its own guards done, grades tail guards until none is left (guard_tail.py); those it
    took are in what this returns.
    """
    if cancel is not None and cancel.is_set():
        return [(g.job, result(g.job, "skipped", reason="cancelled")) for g in guards], []
    # The session collects what its guards need; each revert's fork collects its own tests. A
    # session of reverts alone is configured with theirs, as their own runs would be, and
    # collects nothing after them.
    tests = list(dict.fromkeys([*(t for g in guards for t in g.job.tests), *(tail.tests if tail else [])]))
    if not guards and tail is None:
        tests = reverts.tests if reverts is not None else []
    files: _BatchFiles | None = None
    try:
        with pool.acquire() as scratch:
            scratch.checkout(target.head)
            files = _BatchFiles(scratch, guards, per_guard, reverts, tail)
            seen = ctx.run(scratch.path, tests, files.limit, in_run_dir=RunFiles(files.setup, files.collect))
            root = files.place.tree_inside.rstrip("/") + "/"  # what the forks' messages name
    except ReviewError:
        return [], [g.job for g in [*guards, *_took(tail, files.served if files else []).values()]]
    took = _took(tail, files.served)
    if seen.foreign or seen.run.killed or seen.run.returncode not in (0, 1, 5):
        # The session itself did not run: each guard (and revert) on its own.
        return [], [g.job for g in guards] + [g.job for g in took.values()]
    if reverts is not None:
        reverts.grade(seen.run, scratch.path, ctx)
    graded: list[tuple[GuardJob, GuardResult]] = []
    again: list[GuardJob] = []
    for n, g in [*enumerate(guards), *took.items()]:
        one = _grade(g, files.replies[n], root, seen.run) if n in files.replies else None
        if one is None:
            again.append(g.job)
        else:
            graded.append((g.job, one))
    return graded, again


class _BatchFiles:
    """One batch session's files in its run directory: the request the plugin reads (its guards, the
    tail's socket), the replies its forks write, and the reverts' own (revert_batch.py)."""

    def __init__(self, scratch: Scratch, guards: list[BatchGuard], per_guard: float, reverts: RevertSession | None,
                 tail: Tail | None) -> None:
        self.scratch, self.guards, self.per_guard, self.reverts, self.tail = scratch, guards, per_guard, reverts, tail
        self.place = sandbox.room_for_run(scratch.path, "/")  # the run sees its paths at fixed ones (run/room.py)
        self.replies: dict[int, dict[str, object]] = {}
        self.served: list[TailServer] = []
        shared = len(tail.guards) if tail is not None else 0
        self.limit = per_guard * (len(guards) + shared + len(reverts.items if reverts else ())) + 60
        """The whole session's time limit: every guard's and revert's, and a minute for the rest."""

    def encode(self, g: BatchGuard, n: int) -> dict[str, object]:
        """Guard `g` as the plugin reads it, under reply id `n`."""
        return {"id": n, "module": g.module, "path": [list(p) for p in g.path], "source": g.job.guard.source,
                "filename": self.place.inside(self.scratch.path / g.job.guard.file), "tests": list(g.job.tests)}

    def setup(self, run_dir: Path) -> dict[str, str]:
        """Write the request into `run_dir`; the run's extra environment."""
        self.place = sandbox.room_for_run(self.scratch.path, run_dir)
        env = self.reverts.setup(run_dir, self.scratch) if self.reverts is not None else {}
        if not self.guards and self.tail is None:
            return env
        # Request and replies in the run's own directory: visible to a cold sandboxed run and to a
        # fork of the warm server alike. The plugin is already there, beside the origin plugin, as in
        # every run (origin.write_plugin).
        (run_dir / "batch-out").mkdir()
        request: dict[str, object] = {"timeout": self.per_guard, "out": self.place.inside(run_dir / "batch-out"),
                                      "guards": [self.encode(g, n) for n, g in enumerate(self.guards)]}
        if self.tail is not None:
            try:
                self.served.append(TailServer(self.tail, run_dir / SOCKET_NAME, len(self.guards), self.encode,
                                              self.limit))
                request["tail"] = self.place.inside(run_dir / SOCKET_NAME)
            except OSError:
                pass  # no socket here (a path too long for one): the other sessions take the tail
        (run_dir / "batch.json").write_text(json.dumps(request), encoding="utf-8")
        return merge_env(env, {"PYTHONPATH": str(run_dir / "plugin"), "PYTEST_PLUGINS": PLUGIN_MODULE,
                               guard_batch_child.REQUEST_VAR: str(run_dir / "batch.json")})

    def collect(self, run_dir: Path) -> None:
        """Read the replies (and the reverts') before the run directory goes."""
        for server in self.served:
            server.close()
        if self.reverts is not None:
            self.reverts.collect(run_dir)
        for n in [*range(len(self.guards)), *(self.served[0].served if self.served else ())]:
            try:
                self.replies[n] = json.loads(read_run_text(run_dir / "batch-out" / f"{n}.json") or "")
            except (OSError, ValueError):
                pass


def _took(tail: Tail | None, served: list[TailServer]) -> dict[int, BatchGuard]:
    """Reply id -> tail guard, for each guard the session was handed."""
    if tail is None or not served:
        return {}
    return {n: tail.guards[k] for n, k in served[0].served.items()}


def _grade(g: BatchGuard, reply: dict[str, object], root: str, session: RunResult) -> GuardResult | None:
    """The guard's result from its fork's reply, graded like any run; None to run it the ordinary way."""
    job = g.job
    if "fallback" in reply:
        return None
    seconds = float(reply.get("seconds", 0.0))  # type: ignore[arg-type]
    if reply.get("timeout"):
        return result(job, "timeout", reason=f"killed after {seconds:.1f}s", seconds=seconds, tests_run=job.tests)
    raw = reply.get("tests")
    if not isinstance(raw, list):
        return None
    tests = tuple(TestOutcome(id=str(t["id"]), outcome=_OUTCOMES.get(str(t["outcome"]), "error"),
                              message=str(t.get("message", "")), detail=str(t.get("detail", ""))) for t in raw)
    failed = any(t.outcome in ("failed", "error") for t in tests)
    run = RunResult(command=session.command, returncode=1 if failed else 0, seconds=seconds, pytest=True,
                    tests=tests, warm=session.warm, sandbox=session.sandbox,
                    output="\n".join(t.detail for t in tests if t.detail))
    grade = grade_pytest(run, job.guard.names)
    # A fork stops at the first test that bites: the tests it ran are what it ran.
    ran = tuple(t.id for t in tests) if reply.get("stopped") else job.tests

    def rel(text: str) -> str:
        return text.replace(root, "")

    return result(job, grade.verdict, failing_tests=grade.failing_tests,
                  messages={k: rel(v) for k, v in grade.messages.items()}, reason=rel(grade.reason),
                  seconds=seconds, output=rel(run.output)[-4000:], tests_run=ran)
