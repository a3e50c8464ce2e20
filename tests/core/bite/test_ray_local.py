"""Without --ray-address the Ray engine starts a local Ray that listens on loopback only, with no
dashboard frontend (in a process of its own: one Ray per process)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

_SCRIPT = r"""
import json, os, re, subprocess
from reviewui.core.ray import cluster
c = cluster.connect(None)


def ppid(pid):
    try:
        return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
ours = {os.getpid()}
for _ in range(6):  # descendants, a level at a time
    ours |= {p for p in pids if ppid(p) in ours}
listening = set()
for line in subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout.splitlines():
    owners = {int(x) for x in re.findall(r"pid=(\d+)", line)}
    if owners & ours:
        listening.add(line.split()[3].rsplit(":", 1)[0])
names = []
for p in ours - {os.getpid()}:
    try:
        names.append(open(f"/proc/{p}/cmdline").read().replace("\0", " "))
    except OSError:
        pass
print(json.dumps({"listening": sorted(listening), "nodes": [n.host for n in c.nodes], "slots": c.slots,
                  "dashboard": [n for n in names if "dashboard/dashboard.py" in n], "started": c.started}))
cluster.disconnect()
"""


def test_a_local_ray_listens_on_loopback_only_without_a_dashboard(tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["started"] and seen["nodes"] == ["127.0.0.1"] and seen["slots"] >= 1
    assert seen["listening"] and set(seen["listening"]) <= {"127.0.0.1", "[::ffff:127.0.0.1]"}, seen
    # Ray keeps a dashboard head process (its cluster state), but without the web frontend.
    assert all("--disable-frontend" in d for d in seen["dashboard"]), seen
