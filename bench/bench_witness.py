"""Witnesses on the real-world bench's commits: how many toothless guards get one, how many re-verify, how long.

For each case of bench/realworld/cases.toml (the repository from the local
mirror, the commit installed editable as run.py does), runs

    reviewui bite <commit> --base <commit>^ --guards --witness --format json --fresh

and reads the `witness` of every toothless guard (and toothless hunk). Prints per
commit and in total:

- the share of toothless guards with a witness (found and re-verified);
- the share re-verified: of the witnesses the search reported, those whose test
  passed at the head and failed reverted (the rest were dropped);
- how many were searched with none found (likely equivalent) and how many could
  not be searched (and the commonest reasons: no seed, not in a function);
- the time per guard (the search plus its share of the re-verification), median
  and 90th percentile, and each sweep's wall time.

With `--compare`, each commit is also swept with `--guards` alone first, and the
ratio of the two sweeps' wall times printed (what looking for witnesses costs).
Figures, not assertions: CI cannot reach the repositories.

    python bench/bench_witness.py [--python PY] [--only OWNER/NAME] [--limit N] [--compare]
    python bench/bench_witness.py --python NEW_PY --against OLD_PY [--only OWNER/NAME]

With `--against`, each commit is swept by the reviewui of OLD_PY and of NEW_PY,
in alternating order, and the time per guard with a witness and the wall times
compared (old against new on one machine under one drifting load).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REALWORLD = ROOT / "bench" / "realworld"


def _realworld() -> object:
    spec = importlib.util.spec_from_file_location("realworld_run", REALWORLD / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def checkout(case: dict, python: str, tmp: Path, realworld: object) -> tuple[Path, str, dict[str, str]]:
    """The case's repository at its commit, and the Python and environment its bite runs with (as run.py)."""
    owner, name = case["project"].split("/")
    repo = tmp / f"{name}-{case['commit'][:8]}"
    subprocess.run(["git", "clone", "-q", str(realworld.MIRRORS / f"{owner}+{name}" / "repo"), str(repo)],  # type: ignore[attr-defined]
                   check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", case["commit"]], check=True)
    env = dict(os.environ)
    if case.get("pythonpath"):
        env["PYTHONPATH"] = os.pathsep.join([str(repo / "src"), str(repo)])
    else:
        python = realworld.editable_python(python, repo, tmp / f"venv-{name}-{case['commit'][:8]}")  # type: ignore[attr-defined]
    env["PATH"] = str(Path(python).parent) + os.pathsep + os.environ.get("PATH", "")
    return repo, python, env


def sweep(repo: Path, python: str, env: dict[str, str], commit: str, witness: bool) -> tuple[dict | None, float, str]:
    """The bite report (None when there is none), its wall time and the last line of stderr."""
    start = time.monotonic()
    proc = subprocess.run([python, "-m", "reviewui", "bite", commit, "--base", commit + "^", "--guards",
                           *(["--witness"] if witness else []), "--format", "json", "--fresh"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=3600)
    took = time.monotonic() - start
    try:
        return json.loads(proc.stdout), took, ""
    except ValueError:
        return None, took, (proc.stderr.strip().splitlines() or [""])[-1][:160]


class Tally:
    """What the witnesses of the toothless guards came to, over the commits."""

    def __init__(self) -> None:
        self.toothless = self.found = self.dropped = self.none = self.unsearched = self.hunks = self.hunks_found = 0
        self.with_seconds: list[float] = []
        self.none_seconds: list[float] = []
        self.reasons: collections.Counter[str] = collections.Counter()
        self.hunk_reasons: collections.Counter[str] = collections.Counter()
        self.examples: list[str] = []

    def add(self, doc: dict) -> tuple[int, int]:
        """Count one report's toothless guards (and hunks); (toothless guards, with a witness)."""
        before = (self.toothless, self.found)
        for hunk in doc["hunks"]:
            w = hunk.get("witness")
            if hunk["verdict"] == "toothless" and w is not None:
                self.hunks += 1
                self.hunks_found += w["found"]
                if not w["found"]:
                    self.hunk_reasons["none found" if w["tries"] else w["reason"].split(":")[0][:60] or "?"] += 1
            for g in hunk.get("guards", []):
                w = g.get("witness")
                if g["verdict"] != "toothless" or w is None:
                    continue
                self.toothless += 1
                if w["found"]:
                    self.found += 1
                    self.with_seconds.append(w["seconds"])
                    if len(self.examples) < 6:
                        self.examples.append(f"{hunk['file']}:{g['line']} {g['description'][:60]} — "
                                             f"{w['call'][:70]}: head {w['head'][:30]}, reverted {w['reverted'][:30]}")
                elif "dropped at re-verification" in w["reason"]:
                    self.dropped += 1
                    self.with_seconds.append(w["seconds"])
                elif w["tries"] > 0:
                    self.none += 1
                    self.none_seconds.append(w["seconds"])
                else:
                    self.unsearched += 1
                    self.reasons[w["reason"].split(":")[0][:80] or "?"] += 1
        return self.toothless - before[0], self.found - before[1]

    def report(self) -> str:
        def pct(a: int, b: int) -> str:
            return f"{a}/{b} ({100.0 * a / b:.0f} %)" if b else f"{a}/0"

        searched = self.found + self.dropped
        lines = [f"toothless guards: {self.toothless}",
                 f"  with a witness (re-verified): {pct(self.found, self.toothless)}",
                 f"  witnesses re-verified, of those the search found: {pct(self.found, searched)}",
                 f"  searched, none found (likely equivalent): {self.none}",
                 f"  not searched: {self.unsearched} " + ", ".join(f"{r} ×{n}" for r, n in self.reasons.most_common(4)),
                 f"toothless hunks with a witness: {pct(self.hunks_found, self.hunks)} "
                 + ", ".join(f"{r} ×{n}" for r, n in self.hunk_reasons.most_common(4))]
        for what, times in (("with a witness (search and re-verification)", self.with_seconds),
                             ("searched, none found", self.none_seconds)):
            if times:
                q = statistics.quantiles(times, n=10, method="inclusive")[-1] if len(times) > 1 else times[0]
                lines.append(f"time per guard {what}: median {statistics.median(times):.2f} s, "
                             f"90th percentile {q:.2f} s, max {max(times):.2f} s")
        lines += ["examples:", *(f"  {e}" for e in self.examples)]
        return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable, help="the dev environment's Python (has reviewui and pytest)")
    ap.add_argument("--only", help="run only cases of this owner/name")
    ap.add_argument("--limit", type=int, default=0, help="at most this many commits")
    ap.add_argument("--compare", action="store_true", help="also sweep without --witness and print the time ratio")
    ap.add_argument("--against", metavar="OLD_PY", help="a Python importing another reviewui (an older one): each "
                    "commit swept with both, in alternating order, and the two compared")
    args = ap.parse_args()
    realworld = _realworld()
    args.python = os.path.abspath(args.python)  # the sweeps run in each checkout: a relative path would miss
    if args.against:
        return against(args, realworld)
    cases = [c for c in tomllib.loads((REALWORLD / "cases.toml").read_text(encoding="utf-8"))["case"]
             if not args.only or c["project"] == args.only]
    if args.limit:
        cases = cases[:args.limit]
    tally = Tally()
    ratios: list[float] = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="reviewui-witness-bench-") as tmp:
        for case in cases:
            repo, python, env = checkout(case, args.python, Path(tmp), realworld)
            plain = sweep(repo, python, env, case["commit"], False)[1] if args.compare else None
            doc, took, why = sweep(repo, python, env, case["commit"], True)
            if doc is None:
                print(f"{case['project']} {case['commit'][:10]}: no report ({why})")
                continue
            guards, found = tally.add(doc)
            more = ""
            if plain is not None:
                ratios.append(took / plain)
                more = f", {took / plain:.2f}× the sweep without (--guards alone {plain:.0f} s)"
            print(f"{case['project']} {case['commit'][:10]}: baseline {doc['baseline']['status']}, "
                  f"{guards} toothless guards, {found} with a witness; {took:.0f} s{more}")
    print(tally.report())
    if ratios:
        print(f"sweep with witnesses / without: median {statistics.median(ratios):.2f}× over {len(ratios)} commits")
    print(f"{len(cases)} commits, {time.monotonic() - start:.0f} s, load average {os.getloadavg()[0]:.1f}")
    return 0


def _guard_seconds(doc: dict | None) -> list[float]:
    """The seconds of each toothless guard's witness that was found."""
    return [g["witness"]["seconds"] for h in (doc or {}).get("hunks", []) for g in h.get("guards", [])
            if g["verdict"] == "toothless" and g.get("witness") and g["witness"]["found"]]


def against(args: argparse.Namespace, realworld: object) -> int:
    """Old (`--against`) and new (`--python`) on each commit, interleaved (the machine's load drifts): the
    time per guard with a witness and the sweeps' wall times, with the load average beside each pair."""
    cases = [c for c in tomllib.loads((REALWORLD / "cases.toml").read_text(encoding="utf-8"))["case"]
             if not args.only or c["project"] == args.only][:args.limit or None]
    seconds: dict[str, list[float]] = {"old": [], "new": []}
    wall: dict[str, float] = {"old": 0.0, "new": 0.0}
    with tempfile.TemporaryDirectory(prefix="reviewui-witness-bench-") as tmp:
        for n, case in enumerate(cases):
            order = [("old", os.path.abspath(args.against)), ("new", args.python)]
            said = []
            for side, py in order if n % 2 == 0 else order[::-1]:
                (Path(tmp) / side).mkdir(exist_ok=True)
                repo, python, env = checkout(case, py, Path(tmp) / side, realworld)
                doc, took, _ = sweep(repo, python, env, case["commit"], True)
                seconds[side] += _guard_seconds(doc)
                wall[side] += took
                said.append(f"{side} {took:.1f} s {[round(x, 2) for x in _guard_seconds(doc)]}")
            print(f"{case['project']} {case['commit'][:10]}: {'; '.join(said)}; load {os.getloadavg()[0]:.1f}")
    for side in ("old", "new"):
        times = seconds[side]
        med = f"median {statistics.median(times):.2f} s, max {max(times):.2f} s" if times else "none"
        print(f"{side}: per guard with a witness {med} ({len(times)}); sweeps {wall[side]:.0f} s")
    print(f"new / old sweep time: {wall['new'] / max(wall['old'], 1e-9):.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
