"""The tests' own arguments, captured in a run of their own: the first inputs a witness search tries.

Only a sweep that has something toothless to search pays for it: just
before the search of a hunk's toothless guards, the tests that ran them are
run once more at the head, sandboxed, watching only the functions holding
those guards (`capture`). The baseline never watches anything, so a plain
sweep (and a cached baseline) is the same with or without witnesses. The
witness plugin (`inside/witness_plugin.py`) keeps each call's arguments as
source, bounded in count and size, and writes them into the run's own
directory. What comes back is read with a cap and kept only where every
source fits the grammar of `literal.py`; the rest is dropped, never repaired.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Sequence

from reviewui.core.bite.guard_batch import DefPath
from reviewui.core.bite.runctx import RunContext
from reviewui.core.errors import ReviewError
from reviewui.core.inside import witness_values
from reviewui.core.run import room
from reviewui.core.run.process import read_run_text
from reviewui.core.run.runner import RunFiles
from reviewui.core.run.worktree import Scratch
from reviewui.core.witness import literal
from reviewui.core.witness.model import FunctionSeeds, Seed, Seeds
from reviewui.core.witness.targets import Target

MAX_SEEDS = 16
"""Distinct calls kept per function (up to twice as many that give a new set of parameters something)."""
MAX_BYTES = 2048
"""Characters one call's arguments may take as source."""
READ_CAP = 1 << 20
"""Bytes read of the capture's reply."""


def capture(scratch: Scratch, ctx: RunContext, targets: Sequence[Target], tests: Sequence[str], limit: float,
            project: frozenset[str]) -> tuple[Seeds, str]:
    """The arguments `tests` pass to the targets' functions, in one sandboxed run in `scratch` (at the
    head): (seeds, "") or (no seeds, why the run could not say)."""
    wanted: dict[tuple[str, tuple[object, ...]], DefPath] = {}
    for t in targets:
        wanted.setdefault((t.file, tuple(t.path)), t.path)
    request = SeedCapture([(file, path) for (file, _), path in wanted.items()], project)
    try:
        seen = ctx.run(scratch.path, list(tests), limit, in_run_dir=request.files(scratch.path))
    except ReviewError as e:
        return Seeds(), literal.said(f"the capture run could not start: {e}")
    if seen.foreign or seen.run.killed:
        return Seeds(), "the capture run could not be believed (killed, or its reports were not its own)"
    red = [o.id for o in seen.run.tests if o.outcome in ("failed", "error")]
    if red or (ctx.pytest_mode and not seen.run.tests):
        # green in the baseline: a test that can tell this run from the others is not to be believed either
        return Seeds(), literal.said(f"the capture run's tests did not pass as in the baseline ({', '.join(red[:2])})"
                                     if red else "the capture run reported no test")
    return request.seeds() or Seeds(), ""


class SeedCapture:
    """A capture run's request for seeds, and what it brought back."""

    def __init__(self, targets: list[tuple[str, DefPath]], project: frozenset[str]) -> None:
        self.targets = targets
        self.project = project
        """The project's top-level module names (literal.project_names): what a seed may import."""
        self._seeds: Seeds | None = None
        self._lock = threading.Lock()

    def files(self, scratch: Path) -> RunFiles:
        """The request written into the capture run's own directory, and the reply read back."""
        def setup(run_dir: Path) -> dict[str, str]:
            place = room.for_run(scratch, run_dir)
            request = {
                "out": place.inside(run_dir / "witness-seeds.json"), "max_seeds": MAX_SEEDS, "max_bytes": MAX_BYTES,
                "targets": [{"id": str(n), "filename": place.inside(scratch / file), "name": path[-1][0],
                             "lines": [path[-1][1], path[-1][2]]} for n, (file, path) in enumerate(self.targets)],
            }
            (run_dir / "witness-seeds-request.json").write_text(json.dumps(request), encoding="utf-8")
            return {witness_values.SEEDS_VAR: str(run_dir / "witness-seeds-request.json")}

        def collect(run_dir: Path) -> None:
            seeds = read_seeds(run_dir / "witness-seeds.json", self.targets, self.project)
            with self._lock:
                self._seeds = seeds

        return RunFiles(setup, collect)

    def seeds(self) -> Seeds | None:
        """What the capture run brought back (None before one ran)."""
        with self._lock:
            return self._seeds


def read_seeds(path: Path, targets: list[tuple[str, DefPath]], project: frozenset[str]) -> Seeds:
    """The capture's reply at `path`, each seed checked (an empty Seeds when there is none)."""
    try:
        data = json.loads(read_run_text(path, READ_CAP) or "")
    except (OSError, ValueError):
        return Seeds()
    found = data.get("targets") if isinstance(data, dict) else None
    if not isinstance(found, dict):
        return Seeds()
    out: list[tuple[str, int, FunctionSeeds]] = []
    for n, (file, def_path) in enumerate(targets):
        entry = found.get(str(n))
        one = _function_seeds(entry, project) if isinstance(entry, dict) else None
        if one is not None:
            out.append((file, def_path[-1][2], one))
    return Seeds(tuple(out))


def _function_seeds(entry: dict[str, Any], project: frozenset[str]) -> FunctionSeeds | None:
    try:
        params = tuple((literal.identifier(p[0]), _kind(p[1])) for p in entry.get("params", [])[:64])
    except (literal.NotLiteral, TypeError, IndexError):
        return None
    kept: list[Seed] = []
    for raw in entry.get("seeds", [])[:2 * MAX_SEEDS]:
        seed = _seed(raw, len(params), project)
        if seed is not None:
            kept.append(seed)
    seen = entry.get("seen")
    why = entry.get("why")
    return FunctionSeeds(params, tuple(kept), seen if isinstance(seen, int) and seen >= 0 else 0,
                         literal.said(why) if isinstance(why, str) else "")


def _seed(raw: Any, count: int, project: frozenset[str]) -> Seed | None:
    if not isinstance(raw, dict):
        return None
    values = raw.get("values")
    if not isinstance(values, list) or len(values) != count:
        return None
    try:
        imports = literal.Imports.of(raw.get("imports", []), project)
        for v in values:
            literal.check(v, imports)
    except literal.NotLiteral:
        return None
    return Seed(tuple(values), imports.items)


def _kind(kind: object) -> str:
    if kind not in literal.KINDS:
        raise literal.NotLiteral(f"an odd parameter kind {str(kind)[:20]!r}")
    return str(kind)
