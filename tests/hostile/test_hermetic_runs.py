"""No run remembers another (issue 37): nothing a run can write survives into the next run.

A test that counts its own runs could pass its first runs (the baseline, the instrument check,
the control) and fail every later one, and so make any revert "bite". Its counter goes in every
place a run can write: /dev/shm, /dev, /tmp and TMPDIR, HOME, the run's io dir
(`/reviewui/io`), every writable mount point it finds (the sweep dir was one, at its host path),
a System V shared-memory segment and a key in the user's keyring (x86_64 system call numbers). Each run must find none of them: the counter written by
run N is absent in run N+1, cold and warm. Differential: the same test run twice outside the
sandbox does find its counters (so a wrong path would not pass silently). Then a whole sweep
(bite with guards, cold and warm) of wrong code the test asserts nothing about stays toothless.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from reviewui.core.bite.engine import run_bite
from reviewui.core.bite.instrument import UntrustedCommand
from reviewui.core.bite.runctx import RunContext
from reviewui.core.config import Settings
from reviewui.core.run import room
from reviewui.core.run.command_types import host_program
from reviewui.core.run.warm_runner import WarmPytest
from tests.core.bite.helpers import load, use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

PY = sys.executable

COUNTER = '''import ctypes, os

NAME = ".run-counter"
KEY = 0x5EED1


def places():
    out = {"/dev/shm", "/dev", "/tmp", os.environ.get("TMPDIR", "/tmp"), os.environ.get("HOME", "/"),
           "%(io)s", "%(io)s/run"}
    if os.getcwd().startswith("/reviewui/"):  # inside a run only: on the host these are the host's mounts
        for line in open("/proc/self/mountinfo"):
            fields = line.split()
            if "rw" in fields[5].split(","):
                out.add(fields[4])
    return sorted(p for p in out if not p.startswith(("/proc", "/sys")))


def shm(create):
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.shmget(KEY, 4096, 0o1600 if create else 0) >= 0  # 0o1000: IPC_CREAT


def key(create):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    name = os.environ.get("COUNTER_KEY", NAME).encode()  # on the host: a name of this test's own
    if create:  # add_key("user", name, "x", 1, KEY_SPEC_USER_KEYRING)
        return libc.syscall(248, b"user", name, b"x", 1, -4) >= 0
    return libc.syscall(250, 10, -4, b"user", name, 0) >= 0  # keyctl(KEYCTL_SEARCH, @u, ...)


def counted():
    seen = []
    for place in places():
        path = os.path.join(place, NAME)
        if os.path.exists(path):
            seen.append(place)
        try:
            with open(path, "a") as f:
                f.write("x")
        except OSError:
            pass
    if shm(False):
        seen.append("sysv-shm")
    shm(True)
    if key(False):
        seen.append("keyring")
    key(True)
    return seen
''' % {"io": room.IO}

TEST = COUNTER + '''

def test_first_run():
    seen = counted()
    print("SEEN", seen)
    assert seen == []
'''


def _tree(root: Path) -> Path:
    tree = root / "slot" / "tree"
    tree.mkdir(parents=True)
    (tree / "test_count.py").write_text(TEST)
    return tree


FORGET = ("import ctypes, sys; libc = ctypes.CDLL(None); libc.syscall.restype = ctypes.c_long; "
          "k = libc.syscall(250, 10, -4, b'user', sys.argv[1].encode(), 0); k >= 0 and libc.syscall(250, 21, k)")
"""Invalidate the counter's key in this user's keyring (KEYCTL_SEARCH, then KEYCTL_INVALIDATE)."""


def _forget(key: str) -> None:
    """Remove what the counter leaves on the host (its files, its segment, its key)."""
    for place in ("/dev/shm", "/tmp", "/dev", "/reviewui/io", "/reviewui/io/run"):
        Path(place, ".run-counter").unlink(missing_ok=True)
    subprocess.run(["ipcrm", "-M", str(0x5EED1)], capture_output=True)
    subprocess.run([PY, "-c", FORGET, key], capture_output=True)


def test_outside_the_sandbox_the_counters_are_seen(tmp_path: Path) -> None:
    """The differential: run twice on the host, the second run finds what the first wrote."""
    tree = _tree(tmp_path)
    key = f".run-counter-{uuid.uuid4().hex}"  # a key outlives its process: none an earlier run left
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path / "tmpdir"),
           "COUNTER_KEY": key}
    (tmp_path / "home").mkdir()
    (tmp_path / "tmpdir").mkdir()
    argv = [PY, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_count.py"]
    _forget(key)
    try:
        first = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, timeout=120)
        second = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, timeout=120)
    finally:
        _forget(key)
    assert first.returncode == 0, first.stdout
    assert second.returncode == 1, second.stdout
    for place in ("/dev/shm", "/tmp", str(tmp_path / "home"), str(tmp_path / "tmpdir"), "sysv-shm", "keyring"):
        assert repr(place) in second.stdout, (place, second.stdout[-2000:])


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_run_finds_nothing_a_previous_run_wrote(tmp_path: Path, warm: bool) -> None:
    """Three runs of one sweep's run context (its sweep dir, its plugins), cold and warm."""
    tree = _tree(tmp_path)
    python = host_program(PY)
    assert python is not None
    server = WarmPytest(python) if warm else None
    (tmp_path / "sweep").mkdir()
    ctx = RunContext([PY, "-m", "pytest", "-s", "-p", "no:randomly"], {}, [], Settings(), tmp_path / "sweep",
                     warm=server)
    try:
        runs = [ctx.run(tree, ["test_count.py"], 120).run for _ in range(3)]
    finally:
        if server is not None:
            server.close()
    for n, run in enumerate(runs):
        assert run.warm == warm
        assert run.returncode == 0, (n, run.output[-1500:])
    assert not list((tmp_path / "sweep").iterdir())  # nothing of a run's reached the sweep dir


WRONG = {"pkg/__init__.py": "", "pkg/calc.py": "def mul(a, b):\n    return a * b\n"}
BRANCH = {"pkg/calc.py": "def mul(a, b):\n    if a < 0:\n        return 42\n    return 42\n",
          "tests/test_calc.py": COUNTER + "\n\nfrom pkg.calc import mul\n\n\ndef test_mul():\n    mul(2, 3)\n"
          "    mul(-1, 3)\n    assert counted() == []\n"}


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_test_counting_its_runs_makes_no_bite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: bool) -> None:
    """Wrong code (`mul` returns 42) and a test that asserts only that it has not run before: no
    bite, warm or cold, hunks and guards. Runs of their own find no counter; the forks of one
    batched session share their session's process (a shared mapping made while it collected is a
    counter no emptied directory removes): there the controls refuse the sweep (exit 3)."""
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "repo", WRONG, BRANCH)
    t, d = load(rb.root)
    try:
        rep = run_bite(t, d, Settings(warm_runner=warm), jobs=1, guards=True)
    except UntrustedCommand as e:
        assert "tests/test_calc.py::test_mul" in str(e)
        return
    assert rep.baseline.status == "green", rep.baseline.reason
    verdicts = [(r.verdict, r.reason) for r in rep.results] + \
        [(g.verdict, g.reason) for r in rep.results for g in r.guards]
    assert verdicts and {v for v, _ in verdicts} == {"toothless"}, verdicts


UNSANDBOXED = '''import os, sys, tempfile
from pathlib import Path
from reviewui.core.run import sandbox
from reviewui.core.run.command_types import host_program
from reviewui.core.run.runner import run_tests
from reviewui.core.run.warm_runner import WarmPytest

sandbox.allow_unsandboxed()
assert sandbox.require() == "none"
tree = Path(sys.argv[1])
server = WarmPytest(host_program(sys.executable))
try:
    for _ in range(2):
        run = run_tests(tree, [sys.executable, "-m", "pytest", "-p", "no:randomly"], ["test_ok.py"], 120, warm=server)
        assert run.warm and run.returncode == 0, run.output[-1000:]
finally:
    server.close()
'''


def test_an_unsandboxed_warm_server_never_empties_the_hosts_dirs(tmp_path: Path) -> None:
    """The emptying before each fork happens only in the server's own sandbox: unsandboxed
    (`--unsandboxed`), /tmp, /dev/shm and the keyrings are the host's, and stay as they are."""
    tree = tmp_path / "slot" / "tree"
    tree.mkdir(parents=True)
    (tree / "test_ok.py").write_text("def test_ok():\n    pass\n")
    sentinels = [Path(d) / f"reviewui-test-sentinel-{os.getpid()}" for d in (tempfile.gettempdir(), "/dev/shm")]
    for s in sentinels:
        s.write_text("keep")
    try:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "REVIEWUI_NO_BWRAP": "1"}
        done = subprocess.run([PY, "-c", UNSANDBOXED, str(tree)], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        assert all(s.exists() for s in sentinels)
    finally:
        for s in sentinels:
            s.unlink(missing_ok=True)
