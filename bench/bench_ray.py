"""Benchmark the Ray engine against the local one.

1. One machine: the bench sweep of bench_bite.py (8 hunks, baseline cached)
   on the local engine, then on a local Ray on loopback with the same slots.
   Ray's start-up (the cluster, the node actor) is timed apart; the first
   Ray sweep (tree unpacked, warm servers started on the node) is printed
   apart too. Target: Ray <= 1.5x local.
2. Two simulated nodes (a `ray.cluster_utils.Cluster` on this machine, 2
   slots each) against one node with the same slots, on a sweep of 16
   hunks whose tests wait 1 s each. Target: <= 0.6x.

Run: `python bench/bench_ray.py [--repeat N]` from a checkout with the test
extras (ray included). The machine's cores are shared by both halves: the
second measures dealing, not CPU (the tests sleep).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")

from bench.bench_bite import make_repo as bench_repo  # noqa: E402
from bench.genrepo import git  # noqa: E402
from reviewui.core.bite.engine import BiteCache, run_bite  # noqa: E402
from reviewui.core.bite.executor_ray import ray_engine  # noqa: E402
from reviewui.core.config import Settings  # noqa: E402
from reviewui.core.diff import load_diff  # noqa: E402
from reviewui.core.ray import cluster as ray_cluster  # noqa: E402
from reviewui.core.target import resolve_target  # noqa: E402

SLEEPY = 16


def sleepy_repo(root: Path) -> None:
    """16 modules whose one changed line each is checked by a test that first waits 1 s."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "pkg").mkdir()
    (root / "tests").mkdir()
    (root / "pkg/__init__.py").write_text("")
    for i in range(SLEEPY):
        (root / f"pkg/s{i}.py").write_text(f"def v{i}():\n    return 0\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "agent/work")
    for i in range(SLEEPY):
        (root / f"pkg/s{i}.py").write_text(f"def v{i}():\n    return {i + 1}\n")
        (root / f"tests/test_s{i}.py").write_text(
            f"import time\nfrom pkg.s{i} import v{i}\n\n\ndef test_{i}():\n    time.sleep(1)\n    assert v{i}() == {i + 1}\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "values")
    git(root, "checkout", "-q", "main")


def sweep(root: Path, cache: BiteCache, engine=None) -> float:  # type: ignore[no-untyped-def]
    t = resolve_target(root, "agent/work")
    d = load_diff(str(root), t.base, t.head)
    t0 = time.perf_counter()
    rep = run_bite(t, d, Settings(), jobs=2, cache=cache, engine=engine)
    took = time.perf_counter() - t0
    bad = [r for r in rep.results if r.verdict not in ("bites", "toothless")]
    assert rep.baseline.status == "green" and not bad, (rep.baseline.reason, bad[:2])
    return took


def one_machine(work: Path, repeat: int) -> None:
    root = work / "bench"
    bench_repo(root)
    cache = BiteCache()
    try:
        sweep(root, cache)  # the baseline, cached for both engines
        local = [sweep(root, cache) for _ in range(repeat)]
        t0 = time.perf_counter()
        engine = ray_engine(None, jobs=2)
        startup = time.perf_counter() - t0
        first = sweep(root, cache, engine)
        on_ray = [sweep(root, cache, engine) for _ in range(repeat)]
    finally:
        cache.close()
        ray_cluster.disconnect()
    lm, rm = statistics.median(local), statistics.median(on_ray)
    print(f"one machine, 8 hunks, 2 slots: local {lm:.2f} s, ray {rm:.2f} s -> {rm / lm:.2f}x (target <= 1.5x)")
    print(f"  ray start-up {startup:.1f} s (local Ray + node actor), first ray sweep {first:.2f} s "
          "(tree unpacked, the node's warm servers started)")


def two_nodes(work: Path, repeat: int) -> None:
    import ray
    from ray.cluster_utils import Cluster

    root = work / "sleepy"
    sleepy_repo(root)
    cache = BiteCache()
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
    ray.init(address=c.address, log_to_driver=False)
    try:
        sweep(root, cache)  # the baseline (16 s of sleeping tests), cached
        one = ray_engine(c.address)
        sweep(root, cache, one)
        alone = [sweep(root, cache, one) for _ in range(repeat)]
        ray_cluster.disconnect()
        c.add_node(num_cpus=2)
        c.wait_for_nodes()
        two = ray_engine(c.address)
        sweep(root, cache, two)
        both = [sweep(root, cache, two) for _ in range(repeat)]
    finally:
        cache.close()
        ray_cluster.disconnect()
        ray.shutdown()
        c.shutdown()
    am, bm = statistics.median(alone), statistics.median(both)
    print(f"16 hunks, tests waiting 1 s: one node (2 slots) {am:.2f} s, two nodes (2 slots each) {bm:.2f} s "
          f"-> {bm / am:.2f}x (target <= 0.6x)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=("one", "two"))
    a = ap.parse_args()
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # the simulated nodes on loopback only
    work = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    try:
        if a.only in (None, "one"):
            one_machine(work, a.repeat)
        if a.only in (None, "two"):
            two_nodes(work, a.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
