"""A plain bite sweep (no --guards) against the loop a user would script, at fleet sizes (issue 44).

For each size, a generated project (`genrepo.sweep_repo`: N changed functions, one hunk each,
and their tests) is swept by `reviewui bite` semantics (run_bite, a fresh cache: baseline,
instrument check, warm servers and controls included; the pristine tree built beforehand,
as the naive loop's worktrees are) and by the naive floor: W workers, each with its own
`git worktree` at the head, each hunk `git apply -R` there, the project's tests run with
pytest, the tree put back (`git checkout -- .`). The two are interleaved, `--repeat`
times, and the medians' ratio printed, with the per-hunk cost and the load average.

Targets (issue 44): 32 hunks at --jobs 2 <= 0.8x the two-worker loop; 200 hunks <= 0.3x
the loop at --jobs 2; the per-hunk cost at 200 within 1.2x of that at 10.

Run: python bench/bench_sweep.py [--sizes 10,32,200] [--tests 0] [--jobs 2] [--repeat 3]
(--tests 0: as many tests as functions, two per function for small sizes).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
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
from reviewui.core.bite.engine import BiteCache, run_bite  # noqa: E402
from reviewui.core.config import Settings  # noqa: E402
from reviewui.core.diff import load_diff  # noqa: E402
from reviewui.core.target import resolve_target  # noqa: E402


def ours(repo: Path, jobs: int, controls: int | None = None) -> tuple[float, dict[str, int]]:
    """Seconds of one fresh plain sweep, and its verdict counts."""
    from reviewui.core.bite import plan

    saved = plan.CONTROLS
    if controls is not None:
        plan.CONTROLS = controls
    try:
        target = resolve_target(repo, "agent/work")
        diff = load_diff(str(repo), target.base, target.head)
        cache = BiteCache()
        t0 = time.perf_counter()
        try:
            report = run_bite(target, diff, Settings(test_command=f"{sys.executable} -m pytest"), jobs=jobs,
                              cache=cache)
        finally:
            cache.close()
        return time.perf_counter() - t0, {k: v for k, v in report.summary().items() if v}
    finally:
        plan.CONTROLS = saved


def naive(repo: Path, trees: list[Path], patches: list[bytes]) -> float:
    """Seconds of the scripted loop: each worker reverse-applies one hunk, runs the tests, restores."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

    def work(tree: Path, mine: list[bytes]) -> None:
        for patch in mine:
            subprocess.run(["git", "apply", "-R", "-"], cwd=tree, input=patch, check=True, capture_output=True)
            subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"], cwd=tree,
                           env=env, capture_output=True)
            subprocess.run(["git", "checkout", "-q", "--", "."], cwd=tree, check=True)

    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(len(trees)) as pool:
        list(pool.map(work, trees, [patches[n::len(trees)] for n in range(len(trees))]))
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10,32,200")
    ap.add_argument("--tests", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    per_hunk: dict[int, float] = {}
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            repo = sweep_repo(tmp / f"repo{size}", size, args.tests or max(size, 20))
            target = resolve_target(repo, "agent/work")
            diff = load_diff(str(repo), target.base, target.head)
            patches = [(f"--- a/{f.path}\n+++ b/{f.path}\n" + h.text.rstrip("\n") + "\n").encode()
                       for f in diff.files if f.path.startswith("pkg/") for h in f.hunks]
            trees = []
            for n in range(args.jobs):
                trees.append(tmp / f"naive{size}-{n}")
                git(repo, "worktree", "add", "-q", "--detach", str(trees[-1]), target.head)
            ours(repo, args.jobs)  # untimed: the pristine tree, the plugin cache (a user's first run pays them once)
            mine, theirs, counts = [], [], {}
            for _ in range(args.repeat):  # interleaved: the machine's load hits both alike
                t, counts = ours(repo, args.jobs)
                mine.append(t)
                print(f"  ({size} hunks: reviewui {t:.2f}s, load {os.getloadavg()[0]:.1f}; the loop now)", flush=True)
                theirs.append(naive(repo, trees, patches))
            m, n = statistics.median(mine), statistics.median(theirs)
            per_hunk[size] = m / size
            print(f"{size} hunks, {args.tests or max(size, 20)} tests, --jobs {args.jobs}: reviewui {m:.2f}s "
                  f"({', '.join(f'{k} {v}' for k, v in counts.items())}), naive loop {n:.2f}s: {m / n:.2f}x; "
                  f"per hunk {1000 * m / size:.0f} ms (load {os.getloadavg()[0]:.1f}; runs "
                  f"{', '.join(f'{a:.2f}/{b:.2f}' for a, b in zip(mine, theirs, strict=True))})", flush=True)
        if len(per_hunk) > 1:
            small, big = min(per_hunk), max(per_hunk)
            print(f"per-hunk cost at {big} vs {small}: {per_hunk[big] / per_hunk[small]:.2f}x (target <= 1.2x)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
