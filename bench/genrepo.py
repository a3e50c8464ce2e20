"""Deterministic generated repositories for the benchmarks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=ENV, check=True, capture_output=True)


def big_branch(root: Path, files: int = 400, lines_per_file: int = 100) -> Path:
    """A repo whose branch `agent/big` changes `files` files by about `lines_per_file` lines each.

    With the defaults that is 400 files and ~40k changed lines (20k added, 20k removed).
    """
    if (root / ".git").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for i in range(files):
        p = root / f"pkg{i % 20}" / f"mod{i}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        body = [f"def f{i}_{k}(x):\n    return x + {k}\n" for k in range(lines_per_file // 2)]
        p.write_text("".join(body))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "agent/big")
    for i in range(files):
        p = root / f"pkg{i % 20}" / f"mod{i}.py"
        body = [f"def f{i}_{k}(x):\n    return x * {k} + 1\n" for k in range(lines_per_file // 2)]
        p.write_text("".join(body))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "agent rewrite")
    git(root, "checkout", "-q", "main")
    return root


PER_MODULE = 10
"""Functions per module of a `sweep_repo` (each its own hunk: a blank-line gap keeps them apart)."""


def _function(i: int, changed: bool) -> str:
    """A 9-line scoring function; the branch adds a guard clause and changes the accumulation."""
    guard = "    if limit <= 0:\n        return -1\n" if changed else ""
    step = "total += item * 2" if changed else "total += item"
    return (f"def f{i}(items, limit):\n    \"\"\"Score {i}.\"\"\"\n{guard}    total = 0\n    for item in items:\n"
            f"        if item >= limit:\n            break\n        {step}\n    return total\n\n\n"
            "# keeps each function's change a hunk of its own\n\n\n\n\n\n\n")


def _expected(i: int, k: int) -> tuple[str, int]:
    """The call one test makes of function `i` and what the branch's function returns for it."""
    items = [k % 5, (k + 1) % 5, 9, 1]
    limit = 4
    total = 0
    for item in items:
        if item >= limit:
            break
        total += item * 2
    return f"f{i}({items}, {limit})", total


def sweep_repo(root: Path, functions: int, tests: int) -> Path:
    """A repo whose branch `agent/work` changes `functions` functions (one hunk each, in modules of
    PER_MODULE) and adds `tests` tests spread over them (each function gets at least one that its
    revert and its guard clause fail): the fleet-sized projects of issue 44. Deterministic."""
    if (root / ".git").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    (root / "pkg").mkdir()
    (root / "tests").mkdir()
    (root / "pkg/__init__.py").write_text("")
    (root / "tests/__init__.py").write_text("")
    modules = -(-functions // PER_MODULE)

    def write(changed: bool) -> None:
        for m in range(modules):
            body = "".join(_function(i, changed) for i in range(m * PER_MODULE, min(functions, (m + 1) * PER_MODULE)))
            (root / f"pkg/mod{m}.py").write_text(f'"""Module {m}."""\n\n\n' + body)

    write(False)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "agent/work")
    write(True)
    per_file: dict[int, list[str]] = {}
    for t in range(max(tests, functions)):
        i = t % functions
        call, want = _expected(i, t // functions)
        guard = f"    assert f{i}([1], 0) == -1\n" if t < functions else ""
        per_file.setdefault(i // PER_MODULE, []).append(f"def test_{t}():\n    assert {call} == {want}\n{guard}\n\n")
    for m, rows in per_file.items():
        names = ", ".join(f"f{i}" for i in range(m * PER_MODULE, min(functions, (m + 1) * PER_MODULE)))
        (root / f"tests/test_mod{m}.py").write_text(f"from pkg.mod{m} import {names}\n\n\n" + "".join(rows))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "agent: guard clauses and doubled totals")
    git(root, "checkout", "-q", "main")
    return root


def delta_module(m: int, funcs: int, agent: bool, bump: int | None = None) -> str:
    """Module `m` of `delta_branch`: `funcs` functions far enough apart that each edit is a hunk of its own.

    The agent's version changes one line of each body; `bump` changes function `bump`'s line again.
    """
    out = [f'"""Module {m}."""\n']
    for k in range(funcs):
        line = f"    return c + {k}\n"
        if agent:
            line = f"    return c * {k + 2} + {m}\n" if k != bump else f"    return c * {k + 3} + {m}\n"
        out.append(f"\n\ndef f{m}_{k}(x):\n    a = x\n    b = a\n    c = b\n{line}")
    return "".join(out)


def delta_test(m: int, funcs: int, bump: int | None = None) -> str:
    """The agent's tests of module `m`: one per function, each checking its value (bites)."""
    body = "".join(f"\n\ndef test_f{m}_{k}():\n    assert f{m}_{k}(3) == {3 * (k + (3 if k == bump else 2)) + m}\n"
                   for k in range(funcs))
    names = ", ".join(f"f{m}_{k}" for k in range(funcs))
    return f"from pkg.m{m} import {names}\n{body}"


def delta_branch(root: Path, modules: int = 20, funcs: int = 5) -> Path:
    """A repo whose branch `agent/work` changes `modules` x `funcs` functions, one hunk each, with a test
    file per module (`modules * funcs` hunks, each bitten by its own test); the reviewer's git identity set."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "bench reviewer")
    git(root, "config", "user.email", "reviewer@example.com")
    (root / "pkg").mkdir()
    (root / "tests").mkdir()
    (root / "pkg/__init__.py").write_text("")
    (root / "tests/__init__.py").write_text("")
    for m in range(modules):
        (root / f"pkg/m{m}.py").write_text(delta_module(m, funcs, False))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "agent/work")
    for m in range(modules):
        (root / f"pkg/m{m}.py").write_text(delta_module(m, funcs, True))
        (root / f"tests/test_m{m}.py").write_text(delta_test(m, funcs))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "agent")
    git(root, "checkout", "-q", "main")
    return root


def delta_push(root: Path, m: int = 0, k: int = 0, funcs: int = 5) -> None:
    """The agent pushes again: function `k` of module `m` and its test changed, nothing else."""
    git(root, "checkout", "-q", "agent/work")
    (root / f"pkg/m{m}.py").write_text(delta_module(m, funcs, True, bump=k))
    (root / f"tests/test_m{m}.py").write_text(delta_test(m, funcs, bump=k))
    git(root, "commit", "-qam", "push")
    git(root, "checkout", "-q", "main")
