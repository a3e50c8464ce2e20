"""One plain sweep at --jobs 1, 2, 4, ... up to the machine's cores: the speed-up per step (issue 44).

A generated project (`genrepo.sweep_repo`, --hunks functions, one hunk each) is swept
with a fresh cache at each job count (baseline, instrument check, warm servers and
controls included; the pristine tree built beforehand). Each count runs --repeat times,
interleaved with the others; the medians, the speed-up over --jobs 1 and over the step
before are printed, and where a doubling gains less than --flat (default 1.3x) the curve
is said to flatten there. The load average is printed beside each figure.

Then `--starts N`: the run starts alone, N sandboxed `true` (the mount step and bwrap,
as a cold run and a warm server start) at 1, 2, 4, ... 16 at once: starts per second at
each width. Starts that serialised on a lock or in the kernel's namespace code would stay
at the one-at-a-time rate; starts that only share the CPUs grow to the core count and
stay flat beyond it.

Run: python bench/bench_scaling.py [--hunks 64] [--repeat 3] [--max-jobs N] [--starts 48]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import subprocess
import time
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_sweep import ours  # noqa: E402
from bench.genrepo import sweep_repo  # noqa: E402


def starts(total: int, widths: list[int]) -> None:
    """Print starts per second of `total` sandboxed `true` runs, `width` at a time, for each width."""
    from reviewui.core.run import room, sandbox, storage

    if sandbox.bwrap_problem():
        print(f"no sandbox here: {sandbox.bwrap_problem()}")
        return
    lim = sandbox.limits()
    box = sandbox.Box(writable=(), chdir=Path("/"), limits=lim, python=sys.executable, scratch_size=64 << 20,
                      scratch_files=storage.cold_inodes(40, lim.files), scratch_dirs=(room.TREE, storage.home_inside()))
    print(f"run starts (the mount step: {storage.files_level() == 'tmpfs'}), {total} each:")
    first = None
    for width in widths:
        t0 = time.perf_counter()
        with cf.ThreadPoolExecutor(width) as pool:
            # each start its own wrap: bwrap's options file is read once and removed (bwrap_start.py)
            list(pool.map(lambda _: subprocess.run(sandbox.wrap(["/bin/true"], box), check=True,
                                                   stdin=subprocess.DEVNULL), range(total)))
        rate = total / (time.perf_counter() - t0)
        first = first or rate
        print(f"  {width:>3} at once: {rate:.1f} starts/s ({rate / first:.2f}x one at a time; load "
              f"{os.getloadavg()[0]:.1f})", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hunks", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--flat", type=float, default=1.3)
    ap.add_argument("--starts", type=int, default=0, help="only time N sandboxed starts at widths 1..16")
    args = ap.parse_args()
    if args.starts:
        starts(args.starts, [1, 2, 4, 8, 16])
        return 0
    counts = [1]
    while counts[-1] * 2 <= args.max_jobs:
        counts.append(counts[-1] * 2)
    if counts[-1] != args.max_jobs:
        counts.append(args.max_jobs)
    tmp = Path(tempfile.mkdtemp(prefix="bench-scaling-"))
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    try:
        repo = sweep_repo(tmp / "repo", args.hunks, args.hunks)
        ours(repo, counts[-1])  # untimed: the pristine tree, the plugin cache
        times: dict[int, list[float]] = {n: [] for n in counts}
        loads: dict[int, list[float]] = {n: [] for n in counts}
        for _ in range(args.repeat):
            for n in counts:
                times[n].append(ours(repo, n)[0])
                loads[n].append(os.getloadavg()[0])
        base = statistics.median(times[1])
        before = base
        flat = None
        for n in counts:
            t = statistics.median(times[n])
            step = before / t
            print(f"--jobs {n:>3}: {t:.2f}s  speed-up {base / t:.2f}x over --jobs 1, {step:.2f}x over the step before "
                  f"(load {statistics.median(loads[n]):.1f}; runs {', '.join(f'{x:.2f}' for x in times[n])})")
            if n > 1 and flat is None and step < args.flat:
                flat = n
            before = t
        print(f"cores: {os.cpu_count()}; " + (f"flattens at --jobs {flat}" if flat else "no flattening seen up to "
                                                f"--jobs {counts[-1]}"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
