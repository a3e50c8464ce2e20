"""End to end: a changed file under a folder named with brackets and unicode is bite-checked, not skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clirun import run_cli
from tests.gitrepo import make_repo
from tests.project_python import pytest_command

pytestmark = pytest.mark.slow

DIR = "lib [ü]"
TEST = (
    "import sys\nfrom pathlib import Path\n\n"
    f"sys.path.insert(0, str(Path(__file__).resolve().parent.parent / {DIR!r}))\n"
    "from calc import clamp  # noqa: E402\n\n\n"
    "def test_clamp():\n    assert clamp(-1) == 0\n"
)


def test_bracketed_unicode_folder_bites(tmp_path: Path) -> None:
    base = {f"{DIR}/calc.py": "def clamp(x):\n    return x\n", "tests/test_base.py": "def test_ok():\n    assert True\n"}
    branch = {f"{DIR}/calc.py": "def clamp(x):\n    if x < 0:\n        return 0\n    return x\n", "tests/test_calc.py": TEST}
    make_repo(tmp_path, base, branch)
    proc = run_cli("bite", "agent/work", "--format", "json", "--test-cmd", pytest_command(), "--jobs", "1",
                   cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    hunks = data.get("hunks") or data.get("results")
    assert [h["verdict"] for h in hunks] == ["bites"], hunks
