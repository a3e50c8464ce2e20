"""Benchmark the per-test truth table against the floor: a plain pytest run of the same test files at the
head and on the base (the branch's test files laid over the base's source), outside any sandbox.

The truth table's own runs are the sweep's baseline at the head (measured with coverage, the instrument
check and the null-revert control with it: `Sweep.prepare`) and one run on the base (`tests_table`); the
sweep's reverts reuse that baseline and are reported apart. Target: table / floor <= 2.5.

Run: `python bench/bench_tests.py [--repeat N] [--tests N]` with a Python that has pytest and coverage
(its `-m pytest` is the test command). Prints each run's seconds and the ratio.
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

from bench.genrepo import git  # noqa: E402
from reviewui.core.bite import sweep as sweep_module  # noqa: E402
from reviewui.core.bite.cache import BiteCache  # noqa: E402
from reviewui.core.session import ReviewSession  # noqa: E402

MODULES = 4


def source(i: int, fixed: bool) -> str:
    guard = "    if x < 0:\n        return 0\n" if fixed else ""
    return f"def f{i}(x):\n{guard}    return x\n"


def tests(i: int, n: int, new: bool) -> str:
    # Each test does its own work (building its input) and calls the changed code once: most of a real
    # suite's time is outside the changed files, which are all a measured baseline traces.
    work = "    data = sorted((k * 7919) % 1009 for k in range(2000))\n"
    body = "".join(f"def test_{i}_{k}():\n{work}    assert f{i}({k}) == {k} and data[0] == 0\n\n\n"
                   for k in range(n))
    extra = f"def test_{i}_negative():\n    assert f{i}(-3) == 0\n" if new else ""
    return f"from pkg.m{i} import f{i}\n\n\n{body}{extra}"


def make_repo(root: Path, n: int) -> None:
    """A base with MODULES modules and n tests each; the branch fixes each module and adds a test."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "tests").mkdir()
    (root / "tests" / "__init__.py").write_text("")
    for i in range(MODULES):
        (root / "pkg" / f"m{i}.py").write_text(source(i, False))
        (root / "tests" / f"test_m{i}.py").write_text(tests(i, n, False))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "agent/fix")
    for i in range(MODULES):
        (root / "pkg" / f"m{i}.py").write_text(source(i, True))
        (root / "tests" / f"test_m{i}.py").write_text(tests(i, n, True))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fix negatives")
    git(root, "checkout", "-q", "main")


def plain(root: Path, work: Path) -> float:
    """The floor: `python -m pytest FILES` at the head, and at the base with the branch's test files."""
    files = [f"tests/test_m{i}.py" for i in range(MODULES)]
    total = 0.0
    for name, rev in (("head", "agent/fix"), ("base", "main")):
        tree = work / name
        subprocess.run(["git", "clone", "-q", str(root), str(tree)], check=True)
        subprocess.run(["git", "-C", str(tree), "checkout", "-q", f"origin/{rev}"], check=True)
        if name == "base":
            subprocess.run(["git", "-C", str(tree), "checkout", "-q", "origin/agent/fix", "--", "tests"], check=True)
        env = {**os.environ, "PYTHONPATH": str(tree)}
        start = time.monotonic()
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files], cwd=tree,
                       env=env, capture_output=True)
        total += time.monotonic() - start
    return total


def reviewed(root: Path) -> tuple[float, float, float]:
    """(the table's runs, the reverts, the whole) of `reviewui tests` in this process."""
    spent: dict[str, float] = {"prepare": 0.0}
    real = sweep_module.Sweep.prepare

    def timed(self, *a, **k):  # type: ignore[no-untyped-def]
        start = time.monotonic()
        try:
            return real(self, *a, **k)
        finally:
            spent["prepare"] += time.monotonic() - start

    sweep_module.Sweep.prepare = timed  # type: ignore[method-assign]
    cache = BiteCache()  # as `reviewui tests` does: the sweep's warm servers serve the base run
    try:
        session = ReviewSession.open(root, "agent/fix")
        start = time.monotonic()
        report = session.bite(guards=True, cache=cache)
        swept = time.monotonic() - start
        start = time.monotonic()
        table = session.tests_table(report, cache=cache)
        base_run = time.monotonic() - start
    finally:
        sweep_module.Sweep.prepare = real  # type: ignore[method-assign]
        cache.close()
    assert table.status == "complete", table.reason
    return spent["prepare"] + base_run, swept - spent["prepare"], swept + base_run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tests", type=int, default=150, help="tests per module at the base")
    args = ap.parse_args()
    os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    ratios = []
    for n in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="reviewui-bench-tests-") as tmp:
            work = Path(tmp)
            os.environ["XDG_STATE_HOME"] = str(work / "state")  # nothing stored is reused
            os.environ["XDG_CACHE_HOME"] = str(work / "cache")
            make_repo(work / "repo", args.tests)
            # The floor before and after, averaged: a shared machine's load drifts within a run.
            before = plain(work / "repo", work / "plain")
            shutil.rmtree(work / "plain", ignore_errors=True)
            table, reverts, whole = reviewed(work / "repo")
            floor = (before + plain(work / "repo", work / "plain")) / 2
            ratios.append(table / floor)
            print(f"run {n + 1}: floor (plain head + base) {floor:.2f}s; truth table's runs {table:.2f}s "
                  f"({table / floor:.2f}x); the sweep's reverts after it {reverts:.2f}s; `tests` in all {whole:.2f}s "
                  f"({whole / floor:.2f}x)")
            shutil.rmtree(work / "plain", ignore_errors=True)
    print(f"truth table / floor: median {statistics.median(ratios):.2f}x (target <= 2.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
