"""Bite sweep vs mutmut on the same changed functions: time to a verdict on every changed hunk.

Uses the generated repository of bench/bench_bite.py (8 modules, each gaining
a guard, each with its tests). reviewui sweeps the 8 source hunks (cold: the
baseline and the instrument check included); mutmut (if installed:
`pip install mutmut`) runs every mutant of the 8 changed functions in a copy
of the branch's tree. Prints both times and the ratio (aim: <= 0.5x).
Run: python bench/bench_mutmut.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_bite import N_MODULES, make_repo  # noqa: E402
from reviewui.core.bite.engine import run_bite  # noqa: E402
from reviewui.core.config import Settings  # noqa: E402
from reviewui.core.diff import load_diff  # noqa: E402
from reviewui.core.target import resolve_target  # noqa: E402


def main() -> int:
    mutmut = shutil.which("mutmut") or str(Path(sys.executable).parent / "mutmut")
    if not Path(mutmut).exists():
        print("mutmut is not installed (pip install mutmut): nothing to compare")
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="bench-mutmut-"))
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    try:
        repo = tmp / "repo"
        make_repo(repo)
        target = resolve_target(repo, "agent/work")
        diff = load_diff(str(repo), target.base, target.head)
        t0 = time.perf_counter()
        report = run_bite(target, diff, Settings(), test_cmd=f"{sys.executable} -m pytest")
        ours = time.perf_counter() - t0
        verdicts = sorted({r.verdict for r in report.results})

        tree = tmp / "mutmut"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), target.head], cwd=repo, check=True)
        (tree / "setup.cfg").write_text("[mutmut]\npaths_to_mutate = pkg/\ntests_dir = tests/\n")
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        names = [f"pkg.m{i}.x_f{i}__mutmut_*" for i in range(N_MODULES)]
        t0 = time.perf_counter()
        proc = subprocess.run([mutmut, "run", *names], cwd=tree, env=env, capture_output=True, text=True)
        theirs = time.perf_counter() - t0
        summary = subprocess.run([mutmut, "results", "--all", "true"], cwd=tree, env=env, capture_output=True, text=True)
        killed = summary.stdout.count(": killed")
        survived = summary.stdout.count(": survived")
        print(f"reviewui bite sweep ({len(report.results)} hunks, verdicts {verdicts}): {ours:.2f}s")
        print(f"mutmut run on the same {N_MODULES} functions (exit {proc.returncode}, "
              f"{killed} killed, {survived} survived): {theirs:.2f}s")
        print(f"ratio reviewui/mutmut: {ours / theirs:.2f}x  (aim <= 0.5x: {'met' if ours / theirs <= 0.5 else 'NOT met'})")
        if proc.returncode != 0:
            print(proc.stdout[-2000:], proc.stderr[-2000:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
