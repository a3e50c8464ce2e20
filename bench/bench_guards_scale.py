"""`bite --guards` against mutmut 3 on the same functions, at fleet sizes (issue 44).

A generated project (`genrepo.sweep_repo`: --functions changed functions, one hunk each,
--tests tests spread over them) is swept with guards (run_bite, --jobs 2, a fresh cache:
baseline, instrument check, warm servers and controls included; the pristine tree built
beforehand) and mutmut runs every mutant of the same functions in a worktree of the
head (`source_paths = pkg/`), in pairs run back to back (--pairs); the median of the pairs'
ratios is the figure, printed with the load average. Where the sweep's time went is
printed too: the guards' verdicts, the controls, and the items run alone (a
guard a batch session handed back, by kind).

Targets: <= 0.5x at 200 functions x 200 tests and at 50 x 2 000.
Run: python bench/bench_guards_scale.py --functions 200 --tests 200 [--pairs 1] (needs `pip install mutmut`)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.genrepo import git, sweep_repo  # noqa: E402
from reviewui.core.bite import fallback  # noqa: E402
from reviewui.core.bite.engine import BiteCache, run_bite  # noqa: E402
from reviewui.core.config import Settings  # noqa: E402
from reviewui.core.diff import load_diff  # noqa: E402
from reviewui.core.target import resolve_target  # noqa: E402


def sweep(repo: Path) -> tuple[float, str]:
    """Seconds of one fresh guarded sweep, and what it graded."""
    target = resolve_target(repo, "agent/work")
    diff = load_diff(str(repo), target.base, target.head)
    alone: list[object] = []
    real = fallback.run_alone

    def counted(pool, job, item):  # type: ignore[no-untyped-def]
        alone.append(item)
        return real(pool, job, item)

    import reviewui.core.bite.executor_local as local

    local.run_alone = counted  # type: ignore[assignment]
    cache = BiteCache()
    t0 = time.perf_counter()
    try:
        report = run_bite(target, diff, Settings(test_command=f"{sys.executable} -m pytest"), jobs=2, guards=True,
                          cache=cache)
    finally:
        cache.close()
        local.run_alone = real  # type: ignore[assignment]
    seconds = time.perf_counter() - t0
    guards = [g for r in report.results for g in r.guards]
    kinds = {type(i).__name__ for i in alone}
    return seconds, (f"{len(report.results)} hunks, {len(guards)} guards ({report.guard_summary()}), "
                     f"{report.controls} controls, {len(alone)} items alone ({', '.join(sorted(kinds)) or '-'})")


def mutmut_run(mutmut: str, tree: Path) -> tuple[float, str]:
    shutil.rmtree(tree / "mutants", ignore_errors=True)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.perf_counter()
    proc = subprocess.run([mutmut, "run"], cwd=tree, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    results = subprocess.run([mutmut, "results", "--all", "true"], cwd=tree, env=env, capture_output=True, text=True)
    return seconds, (f"exit {proc.returncode}, {results.stdout.count(': killed')} killed, "
                     f"{results.stdout.count(': survived')} survived")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--functions", type=int, default=200)
    ap.add_argument("--tests", type=int, default=200)
    ap.add_argument("--pairs", type=int, default=1)
    args = ap.parse_args()
    mutmut = shutil.which("mutmut") or str(Path(sys.executable).parent / "mutmut")
    if not Path(mutmut).exists():
        print("mutmut is not installed (pip install mutmut): nothing to compare")
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="bench-guards-scale-"))
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    try:
        repo = sweep_repo(tmp / "repo", args.functions, args.tests)
        tree = tmp / "mutmut"
        git(repo, "worktree", "add", "-q", "--detach", str(tree), "agent/work")
        (tree / "setup.cfg").write_text("[mutmut]\nsource_paths = pkg/\n")
        sweep(repo)  # untimed: the pristine tree and the plugin cache, paid once
        ratios = []
        for _ in range(args.pairs):
            ours, said = sweep(repo)
            theirs, their_said = mutmut_run(mutmut, tree)
            ratios.append(ours / theirs)
            print(f"{args.functions} functions x {args.tests} tests: bite --guards {ours:.2f}s ({said}); "
                  f"mutmut {theirs:.2f}s ({their_said}): {ours / theirs:.2f}x (load {os.getloadavg()[0]:.1f})",
                  flush=True)
        print(f"median ratio {statistics.median(ratios):.2f}x (target <= 0.5x)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
