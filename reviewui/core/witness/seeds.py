"""The tests' own arguments, captured in the search's run: the first inputs a witness search tries.

Only a sweep that has something toothless to search pays for it: the
baseline never watches anything, so a plain sweep (and a cached baseline)
is the same with or without witnesses. The search run of a hunk's toothless
guards (`search.py`) carries this request too: its session first forks once
to run the tests that ran those guards, watching only the functions holding
them (`inside/witness_plugin.py` keeps each call's arguments as source,
bounded in count and size, and writes them into the run's own directory),
and the search starts from what that fork kept. A test that does not pass
there (it passed in the baseline) leaves no seed. What comes back is read
here with a cap and kept only where every source fits the grammar of
`literal.py` (the reasons a guard has no seed); the search itself reads the
same file inside the sandbox, and everything it answers is checked again.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Sequence

from reviewui.core.bite.guard_check import DefPath
from reviewui.core.inside import witness_values
from reviewui.core.run import sandbox
from reviewui.core.run.process import read_run_text
from reviewui.core.run.runner import RunFiles
from reviewui.core.witness import literal
from reviewui.core.witness.model import FunctionSeeds, Seed, Seeds
from reviewui.core.witness.targets import Target

MAX_SEEDS = 16
"""Distinct calls kept per function (up to twice as many that give a new set of parameters something)."""
MAX_BYTES = 2048
"""Characters one call's arguments may take as source."""
READ_CAP = 1 << 20
"""Bytes read of the capture's reply."""
OUT = "witness-seeds.json"
"""The capture's reply, in the run's own directory."""


class SeedCapture:
    """A capture's request for seeds (carried by a search run), and what it brought back."""

    def __init__(self, targets: list[tuple[str, DefPath]], project: frozenset[str], timeout: float = 60.0) -> None:
        self.targets = targets
        self.project = project
        """The project's top-level module names (literal.project_names): what a seed may import."""
        self.timeout = timeout
        """Seconds the capture (its tests' run) may take."""
        self._seeds: Seeds | None = None
        self._why = "the capture made no reply (it outlived its time, or its run did not get that far)"
        self._lock = threading.Lock()

    @classmethod
    def of(cls, targets: Sequence[Target], project: frozenset[str], timeout: float) -> SeedCapture:
        """The request for the functions holding `targets` (each function once)."""
        wanted: dict[tuple[str, tuple[object, ...]], DefPath] = {}
        for t in targets:
            wanted.setdefault((t.file, tuple(t.path)), t.path)
        return cls([(file, path) for (file, _), path in wanted.items()], project, timeout)

    def id_of(self, target: Target) -> str:
        """The capture id of `target`'s function ("" when it is not watched)."""
        return next((str(n) for n, (file, path) in enumerate(self.targets)
                     if file == target.file and list(path) == list(target.path)), "")

    def files(self, scratch: Path) -> RunFiles:
        """The request written into the run's own directory, and the reply read back."""
        def setup(run_dir: Path) -> dict[str, str]:
            place = sandbox.room_for_run(scratch, run_dir)
            request = {
                "out": place.inside(run_dir / OUT), "max_seeds": MAX_SEEDS, "max_bytes": MAX_BYTES,
                "timeout": self.timeout,
                "targets": [{"id": str(n), "filename": place.inside(scratch / file), "name": path[-1][0],
                             "lines": [path[-1][1], path[-1][2]]} for n, (file, path) in enumerate(self.targets)],
            }
            (run_dir / "witness-seeds-request.json").write_text(json.dumps(request), encoding="utf-8")
            return {witness_values.SEEDS_VAR: str(run_dir / "witness-seeds-request.json")}

        def collect(run_dir: Path) -> None:
            seeds = read_seeds(run_dir / OUT, self.targets, self.project)
            why = _why(run_dir / OUT)
            with self._lock:
                self._seeds, self._why = seeds, why

        return RunFiles(setup, collect)

    def seeds(self) -> Seeds | None:
        """What the capture brought back (None before one ran)."""
        with self._lock:
            return self._seeds

    def failed(self) -> str:
        """Why the capture has nothing to say ("" when it said something)."""
        with self._lock:
            return self._why


def _why(path: Path) -> str:
    """Why the capture's reply at `path` is no answer: none, or a test that did not pass ("" when it is one)."""
    try:
        data = json.loads(read_run_text(path, READ_CAP) or "")
    except (OSError, ValueError):
        return "the capture made no reply (it outlived its time, or its run did not get that far)"
    red = data.get("red") if isinstance(data, dict) else None
    if isinstance(red, list) and red:
        # green in the baseline: a test that can tell this run from the others is not to be believed either
        return literal.said("the capture's tests did not pass as in the baseline (" +
                            ", ".join(str(r)[:120] for r in red[:2]) + ")")
    return ""


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
