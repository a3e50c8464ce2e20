"""Guard reverts: fast enough to press, and cheaper than mutmut for the same evidence.

A generated repository: 8 modules, each gaining one new 15-line function
(one hunk each, about 5 guards each after arid lines are skipped) and a test
file for it.

1. The guards of one new function graded with `b` semantics (hunk revert plus
   its guards; baseline cached, warm runner, --jobs 2). Target: <= 2 s.
2. A cold sweep of all 8 hunks and their guards (baseline and instrument
   check included) against `mutmut run` on the same 8 functions (if mutmut is
   installed: `pip install mutmut`), in pairs run back to back (--pairs, 3 by
   default; the median of the pairs' ratios is the figure, since this
   machine's speed drifts over seconds). Target: <= 0.3x. Then, for every mutant
   mutmut kills, whether a guard on the same line bites (or, failing that,
   the function's `body` guard or the hunk revert bites): the evidence mutmut
   finds must not be lost.

Both sides run the same Python: a venv holding pytest, its usual plugins and mutmut, copied
from this one (tests/project_python.py), as the project measured would have; `--dev-venv` runs
both on this venv instead (reviewui's own test plugins in every pytest start, as before 6 Dec 2026).

Run: python bench/bench_guards.py [--repeat N] [--pairs N] [--dev-venv]
"""

from __future__ import annotations

import argparse
import os
import re
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

N = 8
HEAD = '"""Module {i}."""\n\nLIMIT = 5\n'


def function(i: int) -> str:
    """A new 15-line function with the usual agent shapes: guard, loop, early exits, a chain."""
    return f'''

def score{i}(items, limit):
    """Add up items below the limit; negatives count -1."""
    if not items:
        return 0
    total = 0
    for item in items:
        if item is None:
            continue
        if item < 0 and limit > 0:
            total -= 1
        elif item >= limit:
            break
        else:
            total += item
    return total
'''


def tests(i: int) -> str:
    return (f"from pkg.g{i} import score{i}\n\n\n"
            f"def test_empty_{i}():\n    assert score{i}([], 5) == 0\n\n\n"
            f"def test_mixed_{i}():\n    assert score{i}([1, 2, None, -1], 5) == 2\n\n\n"
            f"def test_limit_{i}():\n    assert score{i}([1, 7, 2], 5) == 1\n")


def make_repo(root: Path) -> None:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "pkg").mkdir()
    (root / "tests").mkdir()
    (root / "pkg/__init__.py").write_text("")
    (root / "tests/__init__.py").write_text("")
    for i in range(N):
        (root / f"pkg/g{i}.py").write_text(HEAD.format(i=i))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "agent/work")
    for i in range(N):
        (root / f"pkg/g{i}.py").write_text(HEAD.format(i=i) + function(i))
        (root / f"tests/test_g{i}.py").write_text(tests(i))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "new scoring functions")
    git(root, "checkout", "-q", "main")


def mutmut_killed(mutmut: list[str], tree: Path, env: dict[str, str],
                  lines: bool = True) -> tuple[float, list[tuple[str, int]], int]:
    """Run mutmut on the 8 functions: seconds, (file, line) of each killed mutant (when `lines`:
    a `mutmut show` each), survivors and killed counted either way."""
    (tree / "setup.cfg").write_text("[mutmut]\npaths_to_mutate = pkg/\ntests_dir = tests/\n")
    names = [f"pkg.g{i}.x_score{i}__mutmut_*" for i in range(N)]
    t0 = time.perf_counter()
    proc = subprocess.run([*mutmut, "run", *names], cwd=tree, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-2000:])
    results = subprocess.run([*mutmut, "results", "--all", "true"], cwd=tree, env=env, capture_output=True, text=True)
    killed: list[tuple[str, int]] = []
    survived = 0
    for row in results.stdout.splitlines():
        m = re.match(r"\s*(pkg\.g(\d+)\.\S+__mutmut_\d+): (\w+)", row)
        if not m:
            continue
        if m.group(3) != "killed":
            survived += m.group(3) == "survived"
            continue
        if not lines:
            killed.append((f"pkg/g{m.group(2)}.py", 0))
            continue
        shown = subprocess.run([*mutmut, "show", m.group(1)], cwd=tree, env=env, capture_output=True, text=True)
        line = _changed_line(shown.stdout, (tree / f"pkg/g{m.group(2)}.py").read_text())
        if line is not None:
            killed.append((f"pkg/g{m.group(2)}.py", line))
    return seconds, killed, survived


def _project_python() -> str:
    """A venv with pytest, its usual plugins and mutmut (when this venv has it), made once per machine.
    pytest-asyncio too, which the suite's samples leave out: every figure in bench/README.md had it."""
    from tests.project_python import python

    return python(("mutmut", "pytest-asyncio"))


def _changed_line(diff_text: str, source: str) -> int | None:
    """Line in `source` of the first line mutmut's diff of a mutant removes.

    mutmut 3 diffs the function on its own (its line numbers are not the
    file's), so the removed text is looked up in the file, from the function on.
    """
    removed = next((row[1:] for row in diff_text.splitlines() if row.startswith("-") and not row.startswith("---")),
                   None)
    if removed is None:
        return None
    rows = source.splitlines()
    start = next((n for n, row in enumerate(rows) if row.startswith("def score")), 0)
    for n in range(start, len(rows)):
        if rows[n].strip() == removed.strip():
            return n + 1
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5, help="timed `b` presses on one function")
    ap.add_argument("--pairs", type=int, default=3, help="cold sweeps, each followed by a `mutmut run`")
    ap.add_argument("--dev-venv", action="store_true",
                    help="both sides on this venv (reviewui's own test plugins loaded in every pytest start), "
                         "as the figures before 6 Dec 2026 were taken")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-guards-"))
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    # The project's own Python, as a project of this shape has one: pytest and its usual plugins, and
    # mutmut for the comparison (tests/project_python.py copies them from this venv). This venv
    # would load reviewui's own test plugins (Hypothesis, Textual's snapshots) into every pytest
    # start of both sides: a cost of this checkout, not of the project measured.
    python = sys.executable if args.dev_venv else _project_python()
    cmd = f"{python} -m pytest"
    try:
        repo = tmp / "repo"
        make_repo(repo)
        target = resolve_target(repo, "agent/work")
        diff = load_diff(str(repo), target.base, target.head)
        diff.preload()

        # 1. one new function's guards, as `b` after the first press (baseline cached, warm server up)
        cache = BiteCache()
        try:
            run_bite(target, diff, Settings(), hunks=[("pkg/g0.py", 0)], test_cmd=cmd, jobs=2, guards=True, cache=cache)
            times, n_guards = [], 0
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                rep = run_bite(target, diff, Settings(), hunks=[("pkg/g0.py", 0)], test_cmd=cmd, jobs=2,
                               guards=True, cache=cache)
                times.append(time.perf_counter() - t0)
                n_guards = len(rep.results[0].guards)
        finally:
            cache.close()
        one = statistics.median(times)
        print(f"one new 15-line function: hunk revert + {n_guards} guards, warm, --jobs 2: median {one:.2f}s "
              f"(target <= 2 s: {'met' if one <= 2 else 'NOT met'})")

        # 2. cold sweeps of every hunk and guard, each paired with a `mutmut run` right after it:
        # the machine's speed drifts over seconds, so a pair shares its conditions and the
        # median of the pairs' ratios is the figure.
        have_mutmut = subprocess.run([python, "-c", "import mutmut"], capture_output=True).returncode == 0
        mutmut = [python, "-m", "mutmut"]
        tree = tmp / "mutmut"
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        if have_mutmut:
            subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), target.head], cwd=repo, check=True)
        ratios: list[float] = []
        for n in range(args.pairs if have_mutmut else 1):
            t0 = time.perf_counter()
            report = run_bite(target, diff, Settings(), test_cmd=cmd, jobs=2, guards=True)
            ours = time.perf_counter() - t0
            guards = [g for r in report.results for g in r.guards]
            print(f"cold sweep: {len(report.results)} hunks, {len(guards)} guards "
                  f"({report.guard_summary()}): {ours:.2f}s")
            if not have_mutmut:
                print("mutmut is not installed (pip install mutmut): no ratio, no detection check")
                return 0
            shutil.rmtree(tree / "mutants", ignore_errors=True)  # a fresh run, not mutmut's cached results
            theirs, killed, survived = mutmut_killed(mutmut, tree, env, lines=n == args.pairs - 1)
            ratios.append(ours / theirs if theirs else float("inf"))
            print(f"mutmut run on the same {N} functions: {len(killed)} killed, {survived} survived: {theirs:.2f}s "
                  f"(pair {n + 1}: {ratios[-1]:.2f}x)")
        ratio = statistics.median(ratios)
        print(f"ratio reviewui/mutmut, median of {len(ratios)} pairs: {ratio:.2f}x "
              f"(pairs {', '.join(f'{r:.2f}' for r in ratios)}; target <= 0.3x: {'met' if ratio <= 0.3 else 'NOT met'})")

        biting_lines = {(g.file, g.line) for g in guards if g.verdict == "bites"}
        body_bites = {g.file for g in guards if g.kind == "body" and g.verdict == "bites"}
        hunk_bites = {r.file for r in report.results if r.verdict == "bites"}
        same_line = [k for k in killed if k in biting_lines]
        fallback = [k for k in killed if k not in biting_lines and (k[0] in body_bites or k[0] in hunk_bites)]
        missed = [k for k in killed if k not in biting_lines and k[0] not in body_bites | hunk_bites]
        print(f"mutants mutmut kills: {len(killed)}; a guard on the same line bites for {len(same_line)}; "
              f"only the function's body guard or hunk revert for {len(fallback)}; undetected {len(missed)}")
        lines_only = sorted({k for k in killed if k not in biting_lines})
        if lines_only:
            print("  lines with a killed mutant but no biting guard of their own: "
                  + ", ".join(f"{f}:{n}" for f, n in lines_only))
        print(f"every killed mutant also detected: {'yes' if not missed else 'NO'}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
