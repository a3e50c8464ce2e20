"""Benchmark bite-checks on a generated repository.

1. One bite-check of one hunk (baseline already cached, as after the first
   `b` in a session) against the bare test command on a hand-reverted copy
   of the tree. Target: ratio <= 1.15.
2. A sweep of 8 hunks with --jobs 2 against --jobs 1 (baselines cached).
   Target: speed-up >= 1.7 (needs 2 idle cores).
3. A sweep with its interleaved controls (control.py: at least two null runs per
   session) against the same sweep with none (plan.CONTROLS = 0), interleaved,
   --jobs 2, baselines cached. Target: <= 1.15x (issue 37).

Cold numbers (baseline + instrument check included) are printed for
information. Run: `python bench/bench_bite.py [--repeat N]` with a Python that
has pytest and coverage; its `-m pytest` is the test command, warm runner on
(the default) unless `--cold`.
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

from reviewui.core.bite.engine import BiteCache, run_bite  # noqa: E402
from reviewui.core.config import Settings  # noqa: E402
from reviewui.core.diff import load_diff  # noqa: E402
from reviewui.core.target import resolve_target  # noqa: E402
from bench.genrepo import git  # noqa: E402

N_MODULES = 8


def module(i: int, guarded: bool) -> str:
    guard = "    if x < 0:\n        return 0\n" if guarded else ""
    return (
        f'"""Module {i}."""\n\n\ndef f{i}(x):\n{guard}    total = 0\n'
        "    for k in range(2000):\n        total += (x * k) % 7\n    return x\n"
    )


def test_file(i: int) -> str:
    body = "".join(f"def test_{i}_{k}():\n    assert f{i}({k}) == {k}\n\n\n" for k in range(5))
    return f"from pkg.m{i} import f{i}\n\n\n{body}def test_{i}_guard():\n    assert f{i}(-3) == 0\n"


def make_repo(root: Path, modules: int = N_MODULES) -> None:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "pkg").mkdir()
    (root / "tests").mkdir()
    (root / "pkg/__init__.py").write_text("")
    for i in range(modules):
        (root / f"pkg/m{i}.py").write_text(module(i, False))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "agent/work")
    for i in range(modules):
        (root / f"pkg/m{i}.py").write_text(module(i, True))
        (root / f"tests/test_m{i}.py").write_text(test_file(i))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "guards")
    git(root, "checkout", "-q", "main")


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cold", action="store_true", help="start every run cold (warm-runner = false)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-bite-"))
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    try:
        repo = tmp / "repo"
        make_repo(repo)
        target = resolve_target(repo, "agent/work")
        diff = load_diff(str(repo), target.base, target.head)
        # The interpreter running the bench (a venv with pytest and coverage), not
        # whatever `python` PATH finds: its plugins decide what a run costs.
        settings = Settings(test_command=f"{sys.executable} -m pytest", warm_runner=not args.cold)
        hunk = [("pkg/m0.py", 0)]

        cold = timed(lambda: run_bite(target, diff, settings, hunks=hunk, jobs=1), 1)[0]
        cache = BiteCache()
        warm_report = run_bite(target, diff, settings, hunks=hunk, jobs=1, cache=cache)
        assert [r.verdict for r in warm_report.results] == ["bites"], warm_report.results
        tests_run = list(warm_report.results[0].tests_run)

        # The bare command on a hand-reverted tree, running the same tests the bite-check ran.
        bare_tree = tmp / "bare"
        git(repo, "worktree", "add", "-q", "--detach", str(bare_tree), target.head)
        (bare_tree / "pkg/m0.py").write_text(module(0, False))
        bare_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests_run]
        bare_env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

        def bare() -> None:
            r = subprocess.run(bare_cmd, cwd=bare_tree, env=bare_env, capture_output=True)
            assert r.returncode == 1, r.stdout[-500:]

        def one() -> None:
            rep = run_bite(target, diff, settings, hunks=hunk, jobs=1, cache=cache)
            assert rep.results[0].verdict == "bites"

        bare_t, one_t = [], []
        for _ in range(args.repeat):  # interleaved so background load hits both alike
            bare_t += timed(bare, 1)
            one_t += timed(one, 1)
        b, o = statistics.median(bare_t), statistics.median(one_t)
        print(f"bare command on reverted tree: median {b:.3f}s  ({len(tests_run)} test ids)")
        print(f"one bite-check (cached baseline): median {o:.3f}s   cold (baseline+instrument): {cold:.3f}s")
        print(f"ratio one/bare: {o / b:.2f}x  (target <= 1.15x)")

        run_bite(target, diff, settings, jobs=2, cache=cache)  # warm both scratches

        def sweep(jobs: int):
            def go() -> None:
                rep = run_bite(target, diff, settings, jobs=jobs, cache=cache)
                assert [r.verdict for r in rep.results] == ["bites"] * N_MODULES
            return go

        j1, j2 = [], []
        for _ in range(max(2, args.repeat // 2)):
            j1 += timed(sweep(1), 1)
            j2 += timed(sweep(2), 1)
        s1, s2 = statistics.median(j1), statistics.median(j2)
        print(f"sweep of {N_MODULES} hunks: --jobs 1 median {s1:.3f}s, --jobs 2 median {s2:.3f}s")
        print(f"speed-up jobs2/jobs1: {s1 / s2:.2f}x  (target >= 1.7x; cores: {os.cpu_count()}, "
              f"load: {os.getloadavg()[0]:.2f})")
        from reviewui.core.bite import plan

        def controlled(n: int):
            def go() -> None:
                saved, plan.CONTROLS = plan.CONTROLS, n
                try:
                    rep = run_bite(target, diff, settings, jobs=2, cache=cache)
                finally:
                    plan.CONTROLS = saved
                assert [r.verdict for r in rep.results] == ["bites"] * N_MODULES
                assert (rep.controls >= 2) == (n > 0), rep.controls
            return go

        with_c, without_c = [], []
        for _ in range(max(3, args.repeat)):
            with_c += timed(controlled(2), 1)
            without_c += timed(controlled(0), 1)
        w, wo = statistics.median(with_c), statistics.median(without_c)
        print(f"sweep of {N_MODULES} hunks, --jobs 2: with interleaved controls median {w:.3f}s, without {wo:.3f}s: "
              f"{w / wo:.2f}x  (target <= 1.15x; load {os.getloadavg()[0]:.2f})")
        git(repo, "worktree", "remove", "--force", str(bare_tree))
        cache.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
