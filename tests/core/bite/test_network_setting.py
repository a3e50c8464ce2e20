"""Tests run without network by default; `network = true` in the repo's config lets them reach localhost."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from reviewui.core.diff import load_diff
from reviewui.core.target import resolve_target
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

LOCALHOST_TEST = '''import socket
from app import answer


def test_talks_to_localhost():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.create_connection(server.getsockname(), timeout=2)
    client.close()
    server.close()
    assert answer() == 42
'''


def _can_unshare() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-rn", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _can_unshare(), reason="this machine cannot make a network namespace, so there is nothing to opt out of")
def test_network_setting_decides_whether_localhost_works(tmp_path: Path) -> None:
    make_repo(tmp_path, {"app.py": "def answer():\n    return 41\n"},
              {"app.py": "def answer():\n    return 42\n", "tests/test_app.py": LOCALHOST_TEST})
    target = resolve_target(tmp_path, "agent/work")
    diff = load_diff(str(tmp_path), target.base, target.head)
    cmd = f"{sys.executable} -m pytest"
    isolated = run_bite(target, diff, Settings(), test_cmd=cmd, jobs=1)
    assert isolated.baseline.status != "green"  # no loopback inside the namespace
    allowed = run_bite(target, diff, Settings.from_mapping({"network": True}), test_cmd=cmd, jobs=1)
    assert allowed.baseline.status == "green"
    assert [r.verdict for r in allowed.results] == ["bites"]


def test_network_must_be_a_boolean() -> None:
    from reviewui.core.errors import ReviewError

    with pytest.raises(ReviewError, match="network must be true or false"):
        Settings.from_mapping({"network": "yes"})
