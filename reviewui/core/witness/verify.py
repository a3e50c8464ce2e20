"""Every witness re-verified as a tiny test before it is shown: it must pass at the head and fail reverted.

The search's word is not evidence: it ran beside the branch's code, which
can write its replies. So each witness becomes a test file made only of
checked pieces (`literal.py`): imports, the arguments as sources, the call
and one assertion of the head's answer, all three times over (a witness
answers the same every time). It runs as a probe does, in a scratch through
the sweep's runner: all of a hunk's witness tests at the head in one run,
then each with its guard (or hunk) reverted in a run of its own. One that
does not pass at the head, or does not *fail* (an error is not a failure)
reverted, is dropped.
"""

from __future__ import annotations

import ast
import concurrent.futures as cf
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Sequence

from reviewui.core.bite.runctx import RunContext
from reviewui.core.errors import ReviewError
from reviewui.core.run.worktree import WorktreePool
from reviewui.core.target import Target as Branch
from reviewui.core.witness import literal
from reviewui.core.witness.search import Check, Found
from reviewui.core.witness.targets import Target

REPEAT = 3
"""Times the witness test makes its call: a flaky answer fails it at the head."""
FILE = "test_reviewui_witness"

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


def verify(pool: WorktreePool, branch: Branch, ctx: RunContext, tests: Sequence[WitnessTest],
           limit: float) -> tuple[list[WitnessTest], list[tuple[WitnessTest, str]]]:
    """(kept, dropped with why): each test run at the head (all in one run), then each reverted alone."""
    if not tests:
        return [], []
    # The runs need nothing of each other: as many at once as the pool has slots.
    with cf.ThreadPoolExecutor(max_workers=max(1, min(pool.size, len(tests) + 1)),
                               thread_name_prefix="witness-verify") as threads:
        head = threads.submit(_outcomes, pool, branch, ctx, tests, None, limit)
        back = [threads.submit(_outcomes, pool, branch, ctx, [t], t.target, limit) for t in tests]
        at_head = head.result()
        reverted = [f.result().get(t.path) for f, t in zip(back, tests, strict=True)]
    kept: list[WitnessTest] = []
    dropped: list[tuple[WitnessTest, str]] = []
    for t, there in zip(tests, reverted, strict=True):
        said = at_head.get(t.path)
        if said != "passed":
            dropped.append((t, f"its test does not pass at the head ({said or 'not run'})"))
        elif there != "failed":
            dropped.append((t, f"its test does not fail with that reverted ({there or 'not run'})"))
        else:
            kept.append(t)
    return kept, dropped


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
