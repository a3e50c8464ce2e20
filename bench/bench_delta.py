"""Benchmark evidence per hunk: after a push, a sweep reruns only what changed.

A branch of 100 hunks (20 modules x 5 functions, a test per function: genrepo.delta_branch)
is swept and approved; the agent then pushes a change to one function and its test. Timed,
interleaved, each through a session as `B` or `reviewui bite` runs it, cold (a new BiteCache:
baseline, instrument check and controls included):

- the second sweep of the whole branch, reusing every grade whose key did not change;
- a sweep of that one hunk alone at the new head (`--hunk pkg/m0.py:1 --fresh`).

Target: the first <= 1.5x the second. For information also: a fresh sweep of the whole
branch, and a branch holding only that one hunk and its test. Run:
`python bench/bench_delta.py [--repeat N] [--guards]` with a Python that has pytest and coverage.
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

from bench.genrepo import delta_branch, delta_module, delta_push, delta_test, git  # noqa: E402
from reviewui.core.session import ReviewSession, RunOptions  # noqa: E402


def sweep(repo: Path, *, fresh: bool, hunk: tuple[str, int] | None = None, guards: bool = False) -> float:
    """Seconds for one sweep of `repo`'s agent/work (every hunk, or `hunk` alone), through a session."""
    session = ReviewSession.open(repo, "agent/work", run=RunOptions(test_cmd=f"{sys.executable} -m pytest",
                                                                   fresh=fresh))
    t0 = time.perf_counter()
    report = session.bite([hunk] if hunk else None, guards=guards)
    took = time.perf_counter() - t0
    assert report.baseline.status == "green", report.baseline.reason
    assert all(r.verdict == "bites" for r in report.results), [(r.key, r.verdict) for r in report.results]
    return took


def lone_branch(root: Path) -> Path:
    """A branch holding only the pushed hunk's module (one function changed) and its test."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "pkg").mkdir()
    (root / "tests").mkdir()
    (root / "pkg/__init__.py").write_text("")
    (root / "tests/__init__.py").write_text("")
    (root / "pkg/m0.py").write_text(delta_module(0, 5, False))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "agent/work")
    text = delta_module(0, 5, True, bump=0)
    base_lines = delta_module(0, 5, False).splitlines(keepends=True)
    agent_lines = text.splitlines(keepends=True)
    # only function 0 changed: the other functions as on the base
    first = next(i for i, (a, b) in enumerate(zip(base_lines, agent_lines, strict=True)) if a != b)
    mixed = base_lines[:first] + [agent_lines[first]] + base_lines[first + 1:]
    (root / "pkg/m0.py").write_text("".join(mixed))
    (root / "tests/test_m0.py").write_text(delta_test(0, 1, bump=0))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "agent")
    git(root, "checkout", "-q", "main")
    return root


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--guards", action="store_true", help="grade the guards too (as `B` does)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-delta-"))
    for d in ("state", "cache", "config", "data"):
        os.environ[f"XDG_{d.upper()}_HOME"] = str(tmp / d)
    try:
        repo = delta_branch(tmp / "repo")
        first = sweep(repo, fresh=True, guards=args.guards)
        ReviewSession.open(repo, "agent/work").verdict("approve", "")
        delta_push(repo)
        session = ReviewSession.open(repo, "agent/work")
        found = session.delta()
        assert found is not None and found[1].counts()["changed"] == 2, found  # the function and its test
        lone = lone_branch(tmp / "lone")
        reuse_t, one_t, whole_t, lone_t = [], [], [], []
        for _ in range(args.repeat):  # interleaved: background load hits all alike
            reuse_t.append(sweep(repo, fresh=False, guards=args.guards))
            one_t.append(sweep(repo, fresh=True, hunk=("pkg/m0.py", 0), guards=args.guards))
            whole_t.append(sweep(repo, fresh=True, guards=args.guards))
            lone_t.append(sweep(lone, fresh=True, guards=args.guards))
        r, o, w, lo = (statistics.median(x) for x in (reuse_t, one_t, whole_t, lone_t))
        print(f"first sweep of 100 hunks (fresh): {first:.2f}s")
        print(f"after the push, whole branch reusing grades: median {r:.2f}s  ({', '.join(f'{x:.2f}' for x in reuse_t)})")
        print(f"after the push, that one hunk alone (--hunk, --fresh): median {o:.2f}s  ({', '.join(f'{x:.2f}' for x in one_t)})")
        print(f"after the push, whole branch fresh: median {w:.2f}s")
        print(f"a branch of only that hunk and its test: median {lo:.2f}s")
        print(f"ratio reusing sweep / one hunk alone: {r / o:.2f}x  (target <= 1.5x)")
        print(f"for information: reusing / fresh whole {r / w:.2f}x, reusing / lone branch {r / lo:.2f}x "
              f"(cores: {os.cpu_count()}, load: {os.getloadavg()[0]:.2f})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
