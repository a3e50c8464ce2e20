"""What the sandbox costs: one bite run (a cold `python -m pytest` of a small suite) inside bwrap vs outside.

Prints the median seconds of each and the ratio (target <= 1.10x). Usage: python bench/bench_sandbox.py [N]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

from reviewui.core.run import runner, sandbox

FILES = {
    "pkg/__init__.py": "",
    "pkg/calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from pkg.calc import add\n\n" + "".join(
        f"def test_add_{i}():\n    assert add({i}, 1) == {i + 1}\n\n" for i in range(30)),
}


def _once(root: Path) -> float:
    t = time.perf_counter()
    res = runner.run_tests(root, [sys.executable, "-m", "pytest"], ["tests/test_calc.py"], 120)
    assert res.returncode == 0, res.output
    return time.perf_counter() - t


def _outside(root: Path) -> float:
    with mock.patch.object(sandbox, "bwrap_problem", lambda: "bench: outside"):
        return _once(root)


def main() -> None:
    """Run the bench and print the ratio."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    if sandbox.bwrap_problem():
        print(f"bwrap cannot run here: {sandbox.bwrap_problem()}")
        return
    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "p"
        for rel, text in FILES.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        sandbox.allow_unsandboxed(True)
        _once(root), _outside(root)  # warm the page cache
        # Interleaved pairs: a shared, busy machine drifts less between the two halves of a pair.
        pairs = [(_once(root), _outside(root)) for _ in range(n)]
        inside = statistics.median(p[0] for p in pairs)
        outside = statistics.median(p[1] for p in pairs)
    print(f"inside bwrap: {inside:.3f}s  outside: {outside:.3f}s  ratio: {inside / outside:.2f}x (target <= 1.10x)")


if __name__ == "__main__":
    main()
