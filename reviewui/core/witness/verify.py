"""Every witness re-verified as a tiny test before it is shown: it must pass at the head and fail reverted.

The search's word is not evidence: it ran beside the branch's code, which
can write its replies. So each witness becomes a test file made only of
checked pieces (`literal.py`): imports, the arguments as sources, the call
and one assertion of the head's answer, all three times over (a witness
answers the same every time). It runs as a probe does, in a scratch through
the sweep's runner: all of a hunk's witness tests in one pytest session,
collected once, forked twice per test (the function's code swapped for the
head's, then for the reverted one, as the guard batch grades guards), the
test alone in each fork; a test that session cannot answer for runs the
ordinary way (at the head with the others, then reverted in a run of its
own). One that does not pass at the head, or does not *fail* (an error is
not a failure) reverted, is dropped.
"""

from __future__ import annotations

import ast
import concurrent.futures as cf
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Sequence

from reviewui.core.bite.guard_batch import PLUGIN_MODULE
from reviewui.core.bite.runctx import RunContext
from reviewui.core.errors import ReviewError
from reviewui.core.inside import guard_batch_child
from reviewui.core.run import sandbox
from reviewui.core.run.process import read_run_text
from reviewui.core.run.runner import RunFiles
from reviewui.core.run.worktree import WorktreePool
from reviewui.core.target import Target as Branch
from reviewui.core.witness import literal
from reviewui.core.witness.search import Check, Found
from reviewui.core.witness.targets import Target

REPEAT = 3
"""Times the witness test makes its call: a flaky answer fails it at the head."""
FILE = "test_reviewui_witness"
REPLY_CAP = 64 * 1024
"""Bytes read of one fork's reply."""

_OBJ = '''

def _obj(cls, **attrs):
    """An instance of `cls` with these attributes, made without calling its __init__ (as the tests had it)."""
    made = object.__new__(cls)
    made.__dict__.update(attrs)
    return made
'''


@dataclass(frozen=True)
class WitnessTest:
    """A witness as a test file."""

    target: Target
    found: Found
    path: str
    """Where it is placed in a scratch (repository-relative)."""
    code: str
    """The file's text."""


def compose(found: Found, target: Target) -> str:
    """The witness as a pytest file asserting the head's answer (made only of checked pieces)."""
    check = found.check
    taken = set(found.imports.aliases) | literal.TEST_NAMES
    local: dict[str, str] = {}
    for name, _, _ in found.args:
        var = name if name not in taken else f"arg_{name}"
        while var in taken:
            var += "_"
        taken.add(var)
        local[name] = var
    exprs = [ast.parse(s, mode="eval").body for _, _, s in found.args]
    exprs += [ast.parse(x, mode="eval").body for x in (found.callee, check.expect, check.type) if x]
    used = literal.names_in(exprs)
    head = [f"# reviewui witness for {literal.one_line(target.file)}:{target.line}: {literal.one_line(target.what)}",
            f"# {literal.one_line(target.function)}() answers this call differently with that reverted;",
            "# no selected test checked this case. It asserts what the head answers."]
    imports = (["import pytest"] if check.kind == "raises" else []) + \
        [line for line in found.imports.lines(used) if not _plain_builtin(line)]
    body = [f"{local[name]} = {source}" for name, _, source in found.args]
    parts = [{"pos": local[n], "var": f"*{local[n]}", "kw": f"{n}={local[n]}", "varkw": f"**{local[n]}"}[k]
             for n, k, _ in found.args]
    call = f"{found.callee}({', '.join(parts)})"
    body += _assertion(check, call, local)
    fn = f"test_witness_{target.function}_line_{target.line}"[:100]
    lines = [*head, "", *imports, "" if imports else None, _OBJ.strip("\n") if "_obj" in used else None,
             "", "", f"def {fn}():", f"    for _ in range({REPEAT}):  # the same answer every time",
             *(f"        {b}" for b in body)]
    return "\n".join(x for x in lines if x is not None).replace("\n\n\n\n", "\n\n\n") + "\n"


def _plain_builtin(line: str) -> bool:
    """`from builtins import X` (no alias): the name is there without it."""
    return line.startswith("from builtins import ") and " as " not in line


def _assertion(check: Check, call: str, local: dict[str, str]) -> list[str]:
    if check.kind == "raises":
        return [f"with pytest.raises({check.type}):", f"    {call}"]
    if check.kind == "returns-any":
        return [call]
    subject = "result" if check.kind == "returns" else local[check.param] + (f".{check.attr}" if check.attr else "")
    lines = [f"result = {call}"] if check.kind == "returns" else [call]
    if check.expect:
        op = "is" if check.expect in ("None", "True", "False") else "=="
        return [*lines, f"assert {subject} {op} {check.expect}"]
    return [*lines, f"assert repr({subject}) == {literal.repr_literal(check.text)}"]


def place(target: Target, tests_run: Sequence[str], taken: set[str], n: int) -> str:
    """Where witness test `n` goes: beside the first test that runs the line (its conftest applies),
    else under tests/, never over a file of the head."""
    first = next((t.split("::", 1)[0] for t in tests_run if t.split("::", 1)[0].endswith(".py")), "")
    folder = str(PurePosixPath(first).parent) if first else "tests"
    k = n
    while True:
        name = f"{FILE}_{k}.py"
        rel = name if folder in (".", "") else f"{folder}/{name}"
        if rel not in taken:
            return rel
        k += 1


def verify(pool: WorktreePool, branch: Branch, ctx: RunContext, tests: Sequence[WitnessTest], limit: float,
           head: Callable[[str], str | None] = lambda _: None) -> tuple[list[WitnessTest], list[tuple[WitnessTest, str]]]:
    """(kept, dropped with why): each test run at the head and with its own guard (or hunk) reverted.

    All of them in one pytest session (`head`: a changed file's text at the head); a test that
    session cannot answer for runs the ordinary way: at the head (all in one run), then reverted
    alone.
    """
    if not tests:
        return [], []
    answered = _in_one_session(pool, branch, ctx, tests, limit, head)
    left = [t for t in tests if t.path not in answered]
    if left:
        # The runs need nothing of each other: as many at once as the pool has slots.
        with cf.ThreadPoolExecutor(max_workers=max(1, min(pool.size, len(left) + 1)),
                                   thread_name_prefix="witness-verify") as threads:
            at_head = threads.submit(_outcomes, pool, branch, ctx, left, None, limit)
            back = [threads.submit(_outcomes, pool, branch, ctx, [t], t.target, limit) for t in left]
            said = at_head.result()
            for f, t in zip(back, left, strict=True):
                answered[t.path] = (said.get(t.path), f.result().get(t.path))
    kept: list[WitnessTest] = []
    dropped: list[tuple[WitnessTest, str]] = []
    for t in tests:
        here, there = answered[t.path]
        if here != "passed":
            dropped.append((t, f"its test does not pass at the head ({here or 'not run'})"))
        elif there != "failed":
            dropped.append((t, f"its test does not fail with that reverted ({there or 'not run'})"))
        else:
            kept.append(t)
    return kept, dropped


def _in_one_session(pool: WorktreePool, branch: Branch, ctx: RunContext, tests: Sequence[WitnessTest],
                    limit: float, head: Callable[[str], str | None]) -> dict[str, tuple[str | None, str | None]]:
    """path -> (outcome at the head, outcome reverted) of each test one guard-batch session answered for.

    The session (guard_batch_child.py) collects the witness tests once at the head and forks twice
    per test: once with its function's code compiled from the head's file, once from the reverted
    file, each fork running that test alone. Exact here: a witness test calls the function only in
    its body, which runs in the fork after the swap.
    """
    if ctx.cancel is not None and ctx.cancel.is_set():
        return {}
    entries: list[tuple[WitnessTest, str, str]] = []  # (test, head source, reverted source)
    for t in tests:
        text = head(t.target.file)
        if text is not None:
            entries.append((t, text, t.target.source))
    if not entries:
        return {}
    replies: dict[int, Any] = {}
    with pool.acquire() as scratch:
        try:
            scratch.checkout(branch.head)
            for t, _, _ in entries:
                scratch.add_file(t.path, t.code)

            def setup(run_dir: Path) -> dict[str, str]:
                place = sandbox.room_for_run(scratch.path, run_dir)
                guards = [{"id": 2 * n + side, "module": t.target.module, "path": [list(p) for p in t.target.path],
                           "source": source, "filename": place.inside(scratch.path / t.target.file), "tests": [t.path]}
                          for n, (t, *sources) in enumerate(entries) for side, source in enumerate(sources)]
                (run_dir / "batch-out").mkdir()
                request = {"timeout": limit, "out": place.inside(run_dir / "batch-out"), "guards": guards}
                (run_dir / "batch.json").write_text(json.dumps(request), encoding="utf-8")
                return {"PYTHONPATH": str(run_dir / "plugin"), "PYTEST_PLUGINS": PLUGIN_MODULE,
                        guard_batch_child.REQUEST_VAR: str(run_dir / "batch.json")}

            def collect(run_dir: Path) -> None:
                for n in range(2 * len(entries)):
                    try:
                        replies[n] = json.loads(read_run_text(run_dir / "batch-out" / f"{n}.json", REPLY_CAP) or "")
                    except (OSError, ValueError):
                        pass

            seen = ctx.run(scratch.path, [t.path for t, _, _ in entries], limit * (2 * len(entries) + 1),
                           in_run_dir=RunFiles(setup, collect))
        except ReviewError:
            return {}
    if seen.foreign or seen.run.killed or seen.run.returncode not in (0, 1, 5):
        return {}  # the session itself did not run (or cannot be believed): each the ordinary way
    out: dict[str, tuple[str | None, str | None]] = {}
    for n, (t, _, _) in enumerate(entries):
        here, there = _said(replies.get(2 * n), t.path), _said(replies.get(2 * n + 1), t.path)
        if here is not None and there is not None:
            out[t.path] = (here, there)
    return out


def _said(reply: Any, path: str) -> str | None:
    """The outcome a fork's reply gives the test file at `path`; None when the fork could not run it."""
    if not isinstance(reply, dict) or "fallback" in reply:
        return None
    if reply.get("timeout") is True:
        return "timeout"
    worst: str | None = None
    said = reply.get("tests")
    for o in said if isinstance(said, list) else []:
        if isinstance(o, dict) and str(o.get("id", "")).split("::", 1)[0] == path:
            outcome = o.get("outcome")
            outcome = outcome if outcome in ("passed", "failed", "error", "skipped") else "error"
            worst = outcome if worst in (None, "passed") else worst
    return worst


def _outcomes(pool: WorktreePool, branch: Branch, ctx: RunContext, tests: Sequence[WitnessTest],
              reverted: Target | None, limit: float) -> dict[str, str]:
    """path -> `passed` | `failed` | `error` | `skipped` of each test file's run ({} when the run cannot count)."""
    if ctx.cancel is not None and ctx.cancel.is_set():
        return {}
    with pool.acquire() as scratch:
        try:
            scratch.checkout(branch.head)
            if reverted is not None:
                scratch.edit_file(reverted.file, reverted.source.encode("utf-8"))
            for t in tests:
                scratch.add_file(t.path, t.code)
            seen = ctx.run(scratch.path, [t.path for t in tests], limit, warm=True)
        except ReviewError:
            return {}
    if seen.foreign or seen.run.killed:
        return {}
    out: dict[str, str] = {}
    for o in seen.run.tests:
        path = o.id.split("::", 1)[0]
        if any(path == t.path for t in tests):
            worst = out.get(path)
            out[path] = o.outcome if worst in (None, "passed") else worst
    return out
