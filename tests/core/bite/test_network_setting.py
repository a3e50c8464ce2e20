"""Tests run without network by default (loopback inside the sandbox only); `network = true` lets them out."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from reviewui.core.diff import load_diff
from reviewui.core.target import resolve_target
from tests.gitrepo import make_repo
from tests.project_python import pytest_command

pytestmark = pytest.mark.slow

HOST_SERVER_TEST = '''import socket
from app import answer

PORT = {port}


def test_talks_to_localhost():
    inner = socket.socket()  # loopback inside the sandbox always works
    inner.bind(("127.0.0.1", 0))
    inner.listen(1)
    socket.create_connection(inner.getsockname(), timeout=2).close()
    inner.close()
    socket.create_connection(("127.0.0.1", PORT), timeout=2).close()  # the host's: only with network = true
    assert answer() == 42
'''


def _accept(host: socket.socket, n: int) -> None:
    """Accept up to `n` connections until the socket is closed."""
    try:
        for _ in range(n):
            host.accept()
    except OSError:
        pass


def test_network_setting_decides_whether_the_host_is_reachable(tmp_path: Path) -> None:
    """Loopback works in the sandbox either way (bwrap brings `lo` up); the host's network, including a
    server on the host's loopback, only with `network = true`. (Before the sandbox, network = false
    took loopback away too.)"""
    host = socket.socket()
    host.bind(("127.0.0.1", 0))
    host.listen(16)
    threading.Thread(target=_accept, args=(host, 16), daemon=True).start()
    test = HOST_SERVER_TEST.format(port=host.getsockname()[1])
    make_repo(tmp_path, {"app.py": "def answer():\n    return 41\n"},
              {"app.py": "def answer():\n    return 42\n", "tests/test_app.py": test})
    target = resolve_target(tmp_path, "agent/work")
    diff = load_diff(str(tmp_path), target.base, target.head)
    cmd = pytest_command()
    isolated = run_bite(target, diff, Settings(), test_cmd=cmd, jobs=1)
    assert isolated.baseline.status != "green"  # the host's server is out of reach
    assert "ConnectionRefused" in isolated.baseline.output or "onnection refused" in isolated.baseline.output
    allowed = run_bite(target, diff, Settings.from_mapping({"network": True}), test_cmd=cmd, jobs=1)
    assert allowed.baseline.status == "green", allowed.baseline.output
    assert [r.verdict for r in allowed.results] == ["bites"]
    host.close()


def test_network_must_be_a_boolean() -> None:
    from reviewui.core.errors import ReviewError

    with pytest.raises(ReviewError, match="network must be true or false"):
        Settings.from_mapping({"network": "yes"})
