"""The Ray executor on a real 2-node Ray cluster on loopback: same verdicts as the local engine, a
cancelled hanging run leaves no process, no Ray credential reaches a test, a node without the
sandbox refuses. One cluster for the module (it takes seconds to start)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.bite.executor_ray import ray_engine
from reviewui.core.config import Settings
from reviewui.core.bite.instrument import UntrustedCommand
from reviewui.core.errors import SandboxError
from reviewui.core.ray import cluster as ray_cluster
from tests.core.bite.helpers import VENV_BIN, load
from tests.core.bite.test_guard_tail import _repo, _verdicts
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

PROBE_VAR = "RAY_REVIEWUI_PROBE"
"""A Ray-looking variable every node process has, which the tests' env-allow names."""


class Nodes:
    """The module's cluster, and what a test must never see of it."""

    def __init__(self, cluster, token: Path) -> None:
        self.cluster = cluster
        self.address: str = cluster.address
        self.token = token
        self.session = Path(cluster.head_node.get_session_dir_path())


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp("raynodes")
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        mp.setenv(var, str(root / var.lower()))
    token = root / "home" / ".ray" / "auth_token"  # where Ray keeps a cluster's token
    token.parent.mkdir(parents=True)
    token.write_text("secret-token\n")
    mp.setenv("HOME", str(root / "home"))
    mp.setenv("PATH", VENV_BIN + os.pathsep + os.environ.get("PATH", ""))
    mp.setenv(PROBE_VAR, "seen")
    ray = ray_cluster.need_ray(local=True)
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
    c.add_node(num_cpus=2)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    try:
        yield Nodes(c, token)
    finally:
        ray_cluster.disconnect()
        ray.shutdown()
        c.shutdown()
        mp.undo()


def test_a_sweep_on_two_nodes_grades_as_the_local_engine(nodes: Nodes, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", VENV_BIN + os.pathsep + os.environ.get("PATH", ""))
    t, d = _repo(tmp_path / "r", files=2)
    local = run_bite(t, d, Settings(), jobs=2, guards=True, timeout=30)
    engine = ray_engine(nodes.address)
    seen: list[str] = []
    on_ray = run_bite(t, d, Settings(), jobs=2, guards=True, timeout=30, engine=_spy(engine, seen))
    assert local.baseline.status == "green", local.baseline.output
    assert [(r.key, r.verdict) for r in on_ray.results] == [(r.key, r.verdict) for r in local.results]
    assert _verdicts(on_ray) == _verdicts(local)
    assert len(_verdicts(local)) >= 30 and {"bites", "toothless"} <= set(_verdicts(local).values())
    assert not any(g.reason == "lost by the executor" for r in on_ray.results for g in r.guards)
    assert len(set(seen)) == 2  # both nodes ran some of it


def _spy(engine, seen: list[str]):
    """The engine, noting which node each returned result came from."""

    def make(pool):
        executor = engine(pool)
        real = executor.start

        def start(plan, job):
            execution = real(plan, job)
            submit = execution._submit

            def noting(node, ref, again):
                seen.append(node.node_id)
                submit(node, ref, again)

            execution._submit = noting
            for node, _ in execution._running.values():
                seen.append(node.node_id)
            return execution

        executor.start = start
        return executor

    return make


def _hanging_repo(root: Path, marker: str):
    """A branch whose one hunk, reverted, makes its test start a child (in a session of its own,
    `marker` in its argv) and hang."""
    test = (
        "import subprocess, sys, time\n"
        "from pkg.mode import mode\n\n\n"
        "def test_mode():\n"
        "    if mode() == 'hang':\n"
        f"        subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); time.sleep(600)', {marker!r}])\n"
        "        time.sleep(600)\n"
        "    assert mode() == 'fast'\n"
    )
    return make_repo(root, {"pkg/__init__.py": "", "pkg/mode.py": "def mode():\n    return 'hang'\n"},
                     {"pkg/mode.py": "def mode():\n    return 'fast'\n", "tests/__init__.py": "",
                      "tests/test_mode.py": test})


def _with_marker(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout  # -ww: whole argv
    return [ln for ln in out.splitlines() if marker in ln and "ps -ww" not in ln]


def test_cancelling_a_hanging_run_leaves_no_process(nodes: Nodes, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", VENV_BIN + os.pathsep + os.environ.get("PATH", ""))
    marker = f"reviewui-ray-hang-{uuid.uuid4().hex}"
    t, d = load(_hanging_repo(tmp_path / "r", marker).root)
    cancel = threading.Event()
    seen_hanging: list[bool] = []

    def cancel_once_hanging() -> None:
        deadline = time.monotonic() + 60
        while not _with_marker(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        seen_hanging.append(bool(_with_marker(marker)))
        cancel.set()

    watcher = threading.Thread(target=cancel_once_hanging, daemon=True)
    watcher.start()
    started = time.monotonic()
    report = run_bite(t, d, Settings(), jobs=2, timeout=300, cancel=cancel, engine=ray_engine(nodes.address))
    watcher.join()
    assert report.baseline.status == "green", report.baseline.output
    [hunk] = report.results
    assert time.monotonic() - started < 90, hunk  # stopped by the cancel, not by the 300 s limit
    assert seen_hanging == [True], "the hanging child never showed"
    assert hunk.verdict in ("skipped", "error") and hunk.verdict != "bites", hunk
    deadline = time.monotonic() + 10
    while _with_marker(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _with_marker(marker) == []


def test_no_ray_variable_token_or_session_dir_reaches_a_test(nodes: Nodes, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", VENV_BIN + os.pathsep + os.environ.get("PATH", ""))
    assert nodes.session.is_dir() and nodes.token.is_file()
    test = (
        "import os\n"
        "from pkg.flag import ON\n\n\n"
        "def test_seen():\n"
        "    seen = sorted(k for k in os.environ if k.upper().startswith('RAY_'))\n"
        f"    seen += [p for p in ({str(nodes.token)!r}, {str(nodes.session)!r}, '/tmp/ray') if os.path.exists(p)]\n"
        "    assert ON, f'seen={seen!r}'\n"
    )
    repo = make_repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/flag.py": "ON = False\n"},
                     {"pkg/flag.py": "ON = True\n", "tests/__init__.py": "", "tests/test_seen.py": test})
    t, d = load(repo.root)
    report = run_bite(t, d, Settings(env_allow=(PROBE_VAR,)), jobs=2, timeout=60, engine=ray_engine(nodes.address))
    [hunk] = report.results
    assert hunk.verdict == "bites", hunk
    said = hunk.output + " ".join(hunk.messages.values())
    assert "seen=[]" in said, said


def test_a_node_without_the_sandbox_refuses(nodes: Nodes, monkeypatch: pytest.MonkeyPatch) -> None:
    ray_cluster.disconnect()  # the next connect places actors on every node, the new one too
    with monkeypatch.context() as m:
        m.setenv("REVIEWUI_NO_BWRAP", "1")  # every process of this node: bwrap "cannot run" there
        extra = nodes.cluster.add_node(num_cpus=1)
    try:
        nodes.cluster.wait_for_nodes()
        with pytest.raises(SandboxError, match="refuses: refusing to run the branch's code without a sandbox"):
            ray_cluster.connect(nodes.address)
    finally:
        ray_cluster.disconnect()
        nodes.cluster.remove_node(extra)


def test_a_node_whose_tests_fail_at_the_head_is_refused_not_graded(nodes: Nodes, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # On that node (an environment variable every process of it has, let through by env-allow) the
    # tests fail with nothing reverted: every revert there would "bite". The node says so first.
    monkeypatch.setenv("PATH", VENV_BIN + os.pathsep + os.environ.get("PATH", ""))
    rb = make_repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n"},
                   {"pkg/calc.py": "def add(a, b):\n    return a + b\n",
                    "tests/test_calc.py": "import os\n\nfrom pkg.calc import add\n\n\ndef test_add():\n"
                                          "    assert not os.environ.get('NODE_UNDER_TEST_BROKEN')\n"
                                          "    assert add(2, 3) == 5\n"})
    t, d = load(rb.root)
    settings = Settings(env_allow=("NODE_UNDER_TEST_BROKEN",))
    ray_cluster.disconnect()  # the next connect places actors on every node, the new one too
    with monkeypatch.context() as m:
        m.setenv("NODE_UNDER_TEST_BROKEN", "1")
        extra = nodes.cluster.add_node(num_cpus=1)
    try:
        nodes.cluster.wait_for_nodes()
        with pytest.raises(UntrustedCommand, match="not green at the head there .*test_add"):
            run_bite(t, d, settings, jobs=1, timeout=60, engine=ray_engine(nodes.address))
    finally:
        ray_cluster.disconnect()
        nodes.cluster.remove_node(extra)
    report = run_bite(t, d, settings, jobs=1, timeout=60, engine=ray_engine(nodes.address))
    assert [r.verdict for r in report.results if r.verdict != "not-code"] == ["bites"]  # the healthy nodes grade


def test_a_node_that_dies_mid_sweep_leaves_its_items_to_the_others(nodes: Nodes, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # The second node's actor is killed once its sessions and its check are under way: what it had
    # not answered runs again alone on the first, so nothing is "lost by the executor" and every
    # verdict is the local engine's (none given twice).
    from reviewui.core.bite import executor_ray

    monkeypatch.setenv("PATH", VENV_BIN + os.pathsep + os.environ.get("PATH", ""))
    t, d = _repo(tmp_path / "r", files=2)
    local = run_bite(t, d, Settings(), jobs=2, guards=True, timeout=30)
    real_init = executor_ray.RayExecution.__init__
    killed: list[str] = []

    def init_then_kill(self, cluster, plan, job, key):
        real_init(self, cluster, plan, job, key)
        victim = cluster.nodes[1]
        assert any(node is victim for node, _ in self._running.values())  # it had work when it died
        cluster.ray.kill(victim.actor, no_restart=True)
        killed.append(victim.node_id)

    monkeypatch.setattr(executor_ray.RayExecution, "__init__", init_then_kill)
    try:
        on_ray = run_bite(t, d, Settings(), jobs=2, guards=True, timeout=30, engine=ray_engine(nodes.address))
    finally:
        ray_cluster.disconnect()  # the next test connects again, with a node actor on each node
    assert killed
    assert local.baseline.status == "green", local.baseline.output
    assert not any(g.reason == "lost by the executor" for r in on_ray.results for g in r.guards)
    assert [(r.key, r.verdict) for r in on_ray.results] == [(r.key, r.verdict) for r in local.results]
    assert _verdicts(on_ray) == _verdicts(local)
    assert sum(len(r.guards) for r in on_ray.results) == sum(len(r.guards) for r in local.results)
