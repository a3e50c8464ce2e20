"""The search run: one sandboxed pytest session in a scratch at the head, a fork per target inside it.

The request names each target's module, function and reverted source, its
seeds (captured first in the same session, seeds.py) and hints; the witness plugin replaces the test
loop with the search (`inside/witness_search.py`), and every reply is read
back with a cap and checked before anything of it is kept: sources against
the grammar (`literal.py`), texts capped and made visible. A run whose
canary passed or whose module came from elsewhere counts for nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from reviewui.core.bite.origin import merge_env
from reviewui.core.bite.runctx import RunContext
from reviewui.core.errors import ReviewError
from reviewui.core.inside import witness_values
from reviewui.core.run import sandbox
from reviewui.core.run.process import read_run_text
from reviewui.core.run.runner import RunFiles
from reviewui.core.run.scratch import Scratch
from reviewui.core.witness import literal
from reviewui.core.witness import seeds as seeds_module
from reviewui.core.witness.budget import Budget
from reviewui.core.witness.model import FunctionSeeds
from reviewui.core.witness.seeds import SeedCapture
from reviewui.core.witness.targets import Target

REPLY_CAP = 256 * 1024
"""Bytes read of one target's reply."""
PER_CALL = 0.5
"""Seconds one call may take (never past the target's budget)."""
MEMORY = 512 << 20
"""Bytes a search fork may grow by (RLIMIT_AS above what it holds when it starts)."""


@dataclass(frozen=True)
class Check:
    """What the witness test asserts about the head's answer."""

    kind: str
    """`raises` (type), `returns` (expect or text), `returns-any` (the call alone), `argument` (param, expect or text)."""
    expect: str = ""
    """A checked source the answer equals."""
    text: str = ""
    """The answer's repr, when no source states it."""
    type: str = ""
    """The exception type (a checked name)."""
    param: str = ""
    """The argument that is left different."""
    attr: str = ""
    """Its attribute that is left different ("" for the argument as a whole)."""


@dataclass(frozen=True)
class Found:
    """A witness the search reports, every part checked (not yet re-verified)."""

    callee: str
    args: tuple[tuple[str, str, str], ...]
    """(parameter, kind, source) in call order."""
    imports: literal.Imports
    check: Check
    head: str
    reverted: str


@dataclass(frozen=True)
class Answer:
    """One target's reply: a witness, or none in `tries` tries (with why)."""

    found: Found | None
    tries: int = 0
    seconds: float = 0.0
    why: str = ""


def request(targets: Sequence[Target], seeds: dict[str, FunctionSeeds | None], budget: Budget,
            scratch: Path, run_dir: Path, capture: SeedCapture | None = None) -> dict[str, Any]:
    """The search's request as the run reads it (paths as the run sees them); with a `capture`, each
    target names its function's capture id and the search reads their seeds from its reply."""
    place = sandbox.room_for_run(scratch, run_dir)
    out: list[dict[str, Any]] = []
    for n, t in enumerate(targets):
        s = seeds.get(t.ident)
        out.append({
            "id": str(n), "module": t.module,
            "path": [list(p) for p in t.path], "source": t.source, "filename": place.inside(scratch / t.file),
            "params": [list(p) for p in s.params] if s is not None else [],
            "seeds": [{"values": list(x.values), "imports": [list(i) for i in x.imports]} for x in s.seeds]
            if s is not None else [],
            "hints": t.hints, "hypothesis": t.typed,
            **({"capture": capture.id_of(t)} if capture is not None else {}),
        })
    return {"out": place.inside(run_dir / "witness-out"), "seconds": budget.seconds, "calls": budget.calls,
            "per_call": min(PER_CALL, budget.seconds), "memory": MEMORY, "targets": out,
            **({"seeds_file": place.inside(run_dir / seeds_module.OUT)} if capture is not None else {})}


def run_search(scratch: Scratch, ctx: RunContext, targets: Sequence[Target], seeds: dict[str, FunctionSeeds | None],
               budget: Budget, tests: Sequence[str], limit: float, project: frozenset[str],
               capture: SeedCapture | None = None) -> dict[str, Answer]:
    """Search every target in one run in `scratch` (checked out at the head): ident -> answer (`project`:
    the project's top-level module names, what a witness may import beside value types). With a
    `capture`, the run first captures the tests' own arguments (seeds.py), the targets' seeds.

    A target with no answer is missing from the result (the run failed, or its fork said nothing).
    """
    replies: dict[str, Any] = {}
    files = {t.ident: str(n) for n, t in enumerate(targets)}  # numbers: a path never names a file here

    captured = capture.files(scratch.path) if capture is not None else None

    def setup(run_dir: Path) -> dict[str, str]:
        (run_dir / "witness-out").mkdir()
        doc = request(targets, seeds, budget, scratch.path, run_dir, capture)
        (run_dir / "witness.json").write_text(json.dumps(doc), encoding="utf-8")
        return merge_env(captured.setup(run_dir) if captured is not None else {},
                         {witness_values.SEARCH_VAR: str(run_dir / "witness.json")})

    def collect(run_dir: Path) -> None:
        if captured is not None:
            captured.collect(run_dir)
        for ident, name in files.items():
            try:
                replies[ident] = json.loads(read_run_text(run_dir / "witness-out" / f"{name}.json", REPLY_CAP) or "")
            except (OSError, ValueError):
                pass

    try:
        seen = ctx.run(scratch.path, list(tests), limit, in_run_dir=RunFiles(setup, collect))
    except ReviewError:
        return {}
    if seen.foreign or seen.run.killed:
        return {}  # a run that cannot be believed (its canary passed, a module came from elsewhere)
    by_ident = {t.ident: t for t in targets}
    return {ident: answer for ident, raw in replies.items()
            if (answer := read_answer(raw, project, by_ident[ident])) is not None}


def read_answer(raw: Any, project: frozenset[str], target: Target) -> Answer | None:
    """One reply, checked; None when it is not one."""
    if not isinstance(raw, dict):
        return None
    tries = raw.get("tries")
    seconds = raw.get("seconds")
    tries = tries if isinstance(tries, int) and 0 <= tries <= 1_000_000 else 0
    seconds = float(seconds) if isinstance(seconds, (int, float)) and 0 <= seconds < 1e6 else 0.0
    if "error" in raw:
        return Answer(None, tries, seconds, literal.said(f"the search could not run: {raw['error']}"))
    if raw.get("found") is True:
        try:
            return Answer(read_found(raw.get("witness"), project, target), tries, seconds)
        except literal.NotLiteral as e:
            return Answer(None, tries, seconds, literal.said(f"the search's answer was refused: {e}"))
    why = raw.get("why")
    return Answer(None, tries, seconds, literal.said(why) if isinstance(why, str) else "")


def read_found(w: Any, project: frozenset[str], target: Target) -> Found:
    """A witness from the run, every source checked against the grammar; raises NotLiteral.

    The function called is the target's own (its module and def path, read from the head by
    reviewui), whatever the run names: only the alias it is imported under comes from the run.
    """
    if not isinstance(w, dict):
        raise literal.NotLiteral("not an object")
    imports = literal.Imports.of(w.get("imports"), project)
    root = next((alias for module, attr, alias in imports.items
                 if module == target.module and attr == target.path[0][0]), None)
    if root is None:
        raise literal.NotLiteral("the function is not among the imports")
    callee = ".".join([root, *(name for name, _, _ in target.path[1:])])
    raw_args = w.get("args")
    if not isinstance(raw_args, list) or len(raw_args) > 64:
        raise literal.NotLiteral("args: not a short list")
    args: list[tuple[str, str, str]] = []
    for a in raw_args:
        if not isinstance(a, list) or len(a) != 3 or a[1] not in literal.KINDS:
            raise literal.NotLiteral("args: an entry is not [name, kind, source]")
        literal.check(a[2], imports)
        args.append((literal.identifier(a[0]), str(a[1]), str(a[2])))
    return Found(str(callee), tuple(args), imports, read_check(w.get("assert"), imports, [a[0] for a in args]),
                 literal.said(w.get("head")), literal.said(w.get("reverted")))


def read_check(c: Any, imports: literal.Imports, params: list[str]) -> Check:
    """The assertion, checked; raises NotLiteral."""
    if not isinstance(c, dict) or c.get("kind") not in ("raises", "returns", "returns-any", "argument"):
        raise literal.NotLiteral("assert: an unknown kind")
    kind = str(c["kind"])
    if kind == "raises":
        literal.check(c.get("type"), imports)
        return Check(kind, type=str(c["type"]))
    if kind == "returns-any":
        return Check(kind)
    param = attr = ""
    if kind == "argument":
        param = literal.identifier(c.get("param"))
        if param not in params:
            raise literal.NotLiteral("assert: not one of the call's arguments")
        attr = literal.identifier(c["attr"]) if c.get("attr") is not None else ""
    if "expect" in c:
        literal.check(c["expect"], imports)
        return Check(kind, expect=str(c["expect"]), param=param, attr=attr)
    text = c.get("repr")
    if not isinstance(text, str) or len(text) > 4000:
        raise literal.NotLiteral("assert: neither a source nor a repr")
    return Check(kind, text=text, param=param, attr=attr)
