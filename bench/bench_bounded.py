"""Peak memory of `reviewui check` and `reviewui fixtures` on a branch adding a 10 MiB text `.py`.

The file is dense Python that packs to well under 1 MiB in git (issue 27's attack: it took
`check` to 4.8 GB). Prints each command's peak resident set size in MB (target <= 300 MB).
Usage: python bench/bench_bounded.py [MiB]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_MB = 300

_PEAK = (  # the figure goes to a file: the command's own stdout and stderr stay as they are
    "import resource, subprocess, sys\n"
    "rc = subprocess.run(sys.argv[2:]).returncode\n"
    "open(sys.argv[1], 'w').write(f'{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss} {rc}')\n"
)


def dense_python(mib: int) -> str:
    """About `mib` MiB of valid, repetitive Python (many small functions)."""
    out: list[str] = []
    size = n = 0
    while size < mib << 20:
        chunk = f"def f_{n}(x):\n    return x + {n}\n"
        out.append(chunk)
        size += len(chunk)
        n += 1
    return "".join(out)


def make_branch(root: Path, mib: int) -> None:
    """A repository with a small suite on main and a branch adding `big.py` of `mib` MiB."""
    sys.path.insert(0, str(ROOT))
    from tests.gitrepo import make_repo

    make_repo(root, {"calc.py": "def add(a, b):\n    return a + b\n",
                     "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"},
              {"big.py": dense_python(mib), "calc.py": "def add(a, b):\n    return b + a\n"})


def peak(args: list[str], cwd: Path) -> tuple[int, int, str, str]:
    """Run `python -m reviewui args` in `cwd`; return (exit code, peak RSS in KiB, stdout, stderr).

    The peak is the largest resident set of reviewui and of every process it waited for (git too).
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with tempfile.TemporaryDirectory() as d:
        figure = Path(d) / "peak"
        proc = subprocess.run([sys.executable, "-c", _PEAK, str(figure), sys.executable, "-m", "reviewui", *args],
                              cwd=cwd, capture_output=True, text=True, env=env, timeout=600)
        kib, rc = (int(x) for x in figure.read_text().split())
    return rc, kib, proc.stdout, proc.stderr


def main() -> None:
    """Build the branch and print the peak memory of each command."""
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    with tempfile.TemporaryDirectory() as d:
        repo = Path(d) / "repo"
        make_branch(repo, mib)
        for args in (["check", "agent/work", "--base", "main"], ["fixtures", "agent/work", "--base", "main"]):
            rc, kib, _, _ = peak(args, repo)
            mb = kib / 1024
            print(f"reviewui {args[0]} on a {mib} MiB file: peak {mb:.0f} MB (exit {rc}; target <= {TARGET_MB} MB)"
                  f"{'' if mb <= TARGET_MB else '  OVER TARGET'}")


if __name__ == "__main__":
    main()
