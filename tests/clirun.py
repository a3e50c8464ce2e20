"""Run the reviewui CLI in a subprocess, importing this checkout's package."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -m reviewui args...` in `cwd`; stdout/stderr captured as text."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "reviewui", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )
