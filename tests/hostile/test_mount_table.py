"""The mount table of every run, cold and warm, names no host path among its mount points (issue 37).

A run sees its mount points in /proc/self/mountinfo. Each is one of the system dirs bound where
they are (`/usr`, `/bin`, `/lib*`, `/etc/<file>`), the run's own (`/`, `/dev`, `/proc`, `/tmp`),
or a neutral path under `/reviewui/` (its slot, io dir, interpreter, plugins). A cold run of a
sweep once had the sweep dir at its host path. Differential: the same check on the host's own
mount table finds mount points outside that list (so the check can see one).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from reviewui.core.bite.runctx import RunContext
from reviewui.core.config import Settings
from reviewui.core.run.command_types import host_program
from reviewui.core.run.warm_runner import WarmPytest

pytestmark = pytest.mark.slow

PY = sys.executable
NEUTRAL = re.compile(r"^/(?:|usr|bin|sbin|lib|lib32|lib64|libx32|etc/[^/]+|dev(?:/.*)?|proc(?:/.*)?|tmp|reviewui/.+)$")
"""Mount points a run may have: none of them names where anything lives on the host."""

TEST = '''import json


def test_points():
    points = [line.split()[4] for line in open("/proc/self/mountinfo")]
    print("POINTS=" + json.dumps(points).encode().hex())
'''


def _strange(points: list[str]) -> list[str]:
    return [p for p in points if not NEUTRAL.match(p)]


def test_on_the_host_the_check_finds_host_paths() -> None:
    points = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    assert _strange(points), points


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_runs_mount_points_name_no_host_path(tmp_path: Path, warm: bool) -> None:
    tree = tmp_path / "slot" / "tree"
    tree.mkdir(parents=True)
    (tree / "test_points.py").write_text(TEST)
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    python = host_program(PY)
    assert python is not None
    server = WarmPytest(python) if warm else None
    try:
        run = RunContext([PY, "-m", "pytest", "-s", "-p", "no:randomly"], {}, [], Settings(), sweep,
                         warm=server).run(tree, ["test_points.py"], 120).run
    finally:
        if server is not None:
            server.close()
    assert run.returncode == 0 and run.warm == warm, run.output[-1500:]
    points = json.loads(bytes.fromhex(run.output.split("POINTS=", 1)[1].split()[0]))
    assert "/reviewui/slot" in points and "/tmp" in points, points
    assert _strange(points) == [], points
    text = json.dumps(points)
    for host in (str(tmp_path), str(Path.home()), sys.prefix, sys.base_prefix, "reviewui-"):
        if not host.startswith("/usr"):
            assert host not in text, (host, points)
