"""The branch every tell probe runs against, and its sweep (tests/hostile/test_*reads*, test_reflog,
test_loose_objects): `n` functions that return 42 whatever they are given, and tests that call
them and assert nothing about what they return. Any hunk that "bites" there was told apart by
something other than the code: the probe the test module carries."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.bite import revert_batch
from reviewui.core.bite.engine import UntrustedCommand, run_bite
from reviewui.core.bite.report import BiteReport
from reviewui.core.config import Settings
from reviewui.core.diff import Diff
from reviewui.core.run.alike import AlikeRuns, pad, style_of
from reviewui.core.target import Target
from tests.core.bite.helpers import load
from tests.gitrepo import make_repo


def base_files(n: int) -> dict[str, str]:
    """The base: a package of `n` modules, `f{i}` returning what it is given."""
    return {"pkg/__init__.py": "", **{f"pkg/m{i}.py": f"def f{i}(x):\n    return x\n" for i in range(n)}}


def head_files(n: int) -> dict[str, str]:
    """The branch's wrong code: each `f{i}` returns 42."""
    return {f"pkg/m{i}.py": f"def f{i}(x):\n    y = x\n    return 42\n" for i in range(n)}


def imports(n: int) -> str:
    """The test module's imports of every `f{i}`."""
    return "".join(f"from pkg.m{i} import f{i}\n" for i in range(n))


def calls(n: int) -> str:
    """`CALLS()`: every function covered, none checked."""
    return "def CALLS():\n" + "".join(f"    f{i}(2)\n" for i in range(n))


def run_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every revert and control run alone, each in a scratch of its own (git commits there)."""
    monkeypatch.setattr(revert_batch, "batchable", lambda pending: ([], list(pending)))


def sweep(target: Target, diff: Diff, fixed: bool, settings: Settings | None = None) -> BiteReport | None:
    """The probe's sweep (its baseline green), or None when a control caught the probe, which is as
    good as no bite: then only with the fix on."""
    try:
        rep = run_bite(target, diff, settings or Settings(), jobs=2, timeout=60)
    except UntrustedCommand as e:
        assert fixed, f"the probe was caught with the fix off: {e}"
        return None
    assert rep.baseline.status == "green", rep.baseline.reason
    return rep


def presented(root: Path, base: dict[str, str], head: dict[str, str]) -> dict[str, bytes]:
    """Each file of `head` as every run of a sweep of base..head shows it (run/alike.py pads the changed
    Python files), worked out as an agent that knows reviewui would: a probe that pins what it reads
    pins this. `root`: where a repository of the code alone is made to ask."""
    _, d = load(make_repo(root, base, head).root)
    reserve = AlikeRuns.of(d, "").reserve
    return {p: pad(t.encode(), len(t.encode()) + reserve[p], style_of(p) or "#") if p in reserve else t.encode()
            for p, t in head.items()}


def outside(tree: Path, calc: bytes, *argv: str) -> subprocess.CompletedProcess[str]:
    """The pin module `tests/test_pin.py` run outside the sandbox on `tree` with `calc` as
    `pkg/calc.py` (pytest, or this Python with `argv`)."""
    (tree / "pkg" / "calc.py").write_bytes(calc)
    shutil.rmtree(tree / "pkg" / "__pycache__", ignore_errors=True)
    cmd = list(argv) or ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_pin.py"]
    return subprocess.run([sys.executable, *cmd], cwd=tree, capture_output=True, text=True, timeout=120)


def pin_digest(tree: Path, files: dict[str, str], head: bytes) -> str:
    """What the pin module among `files` (its `digest()`) says of `head` as `pkg/calc.py`, asked
    outside the sandbox in a tree of `files` made at `tree`."""
    for path, text in files.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)
    ask = "import sys; sys.path[:0] = ['.', 'tests']; import test_pin; print(test_pin.digest())"
    return outside(tree, head, "-c", ask).stdout.strip()
