"""The tests' own arguments, captured in the baseline run: the first inputs a witness search tries.

A sweep that looks for witnesses asks its baseline (the one run of the
selected tests at the head, `RunContext.run` with `record_opens`) to watch
the functions around the agent's added lines: the witness plugin
(`inside/witness_plugin.py`) keeps each call's arguments as source, bounded
in count and size, and writes them into the run's own directory. What comes
back is read with a cap and kept only where every source fits the grammar
of `literal.py`; the rest is dropped, never repaired.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Callable

from reviewui.core.bite.guard_check import DefPath
from reviewui.core.bite.origin import ChangedModule
from reviewui.core.diff import FileDiff, Hunk
from reviewui.core.inside import witness_values
from reviewui.core.run import sandbox
from reviewui.core.run.process import read_run_text
from reviewui.core.run.runner import RunFiles
from reviewui.core.witness import literal
from reviewui.core.witness.model import FunctionSeeds, Seed, Seeds
from reviewui.core.witness.targets import functions

MAX_SEEDS = 16
"""Distinct calls kept per function (up to twice as many that give a new set of parameters something)."""
MAX_BYTES = 2048
"""Characters one call's arguments may take as source."""
READ_CAP = 1 << 20
"""Bytes read of the capture's reply."""


def capture_targets(targets: list[tuple[FileDiff, Hunk]], head_text: Callable[[str], str | None],
                    modules: list[ChangedModule]) -> list[tuple[str, DefPath]]:
    """(file, def path) of every function around an added line of a changed module, in diff order."""
    importable = {m.path for m in modules}
    out: dict[tuple[str, tuple[object, ...]], DefPath] = {}
    lines: dict[str, list[int]] = {}
    for f, h in targets:
        if f.path in importable:
            lines.setdefault(f.path, []).extend(ln.new_no for ln in h.lines if ln.kind == "added" and ln.new_no)
    for path, wanted in lines.items():
        for found in functions(head_text(path), wanted):
            out.setdefault((path, tuple(found)), found)
    return [(file, found) for (file, _), found in out.items()]


class SeedCapture:
    """The baseline's request for seeds, and what it brought back (RunContext.capture)."""

    def __init__(self, targets: list[tuple[str, DefPath]], project: frozenset[str]) -> None:
        self.targets = targets
        self.project = project
        """The project's top-level module names (literal.project_names): what a seed may import."""
        self._seeds: Seeds | None = None
        self._lock = threading.Lock()

    def files(self, scratch: Path) -> RunFiles:
        """The request written into the baseline run's own directory, and the reply read back."""
        def setup(run_dir: Path) -> dict[str, str]:
            place = sandbox.room_for_run(scratch, run_dir)
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
        """What the last baseline run captured (None before one ran)."""
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
