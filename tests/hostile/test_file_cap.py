"""The files a run creates are bounded by the kernel, not only counted between two looks.

A test that creates files as fast as it can, with the watcher's looks turned
off (so only the kernel can stop it): the file past `file-limit` (plus the
one of storage.FILE_MARGIN) fails inside with ENOSPC, in the slot and in the
private /tmp, cold and warm, and the run is graded `broken` ("file limit").
Where the kernel cannot cap them (the mount step unavailable) the self-test
says so, the files are watched as before, and the sandbox keeps its
promises. These tests run as whoever runs the suite: CI runs them as root
and again as an ordinary user (`.ci/run`).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from reviewui.core.run import mountns, room, sandbox, storage, watch
from reviewui.core.run.runner import run_tests
from reviewui.core.run.warm_runner import WarmPytest

pytestmark = pytest.mark.slow

PY = sys.executable
FILES = 300

CREATE = '''import errno, os


def test_create_past_the_limit():
    before = os.statvfs(os.path.dirname(os.path.abspath({where!r}))).f_ffree
    os.makedirs({where!r}, exist_ok=True)
    made, err = 0, None
    for n in range(20000):
        try:
            open(os.path.join({where!r}, str(n)), "w").close()
        except OSError as e:
            err = e.errno
            break
        made += 1
    free = os.statvfs({where!r}).f_ffree
    print("BEFORE", before, "CREATED", made, "ERRNO", err, "FREE", free)
    assert False, "the run went on"
'''


def _limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("reviewui.core.run.limits.DEFAULT_FILES", FILES)
    monkeypatch.setenv("REVIEWUI_DISK_LIMIT", "64M")
    from reviewui.core.run import limits

    limits._fitted.cache_clear()


@pytest.fixture
def no_looks(monkeypatch: pytest.MonkeyPatch):
    """The watcher looks only once the run has ended: anything stopped earlier, the kernel stopped."""
    monkeypatch.setattr(watch, "INTERVAL", 3600.0)
    _limits(monkeypatch)
    yield
    from reviewui.core.run import limits

    limits._fitted.cache_clear()


def _run(tmp_path: Path, where: str, warm: bool):
    root = tmp_path / "a" / "tree"
    root.mkdir(parents=True)
    (root / "test_cap.py").write_text(CREATE.format(where=where))
    for n in range(40):  # the tree's own entries are the tree's, not the run's
        (root / f"data_{n}.txt").write_text("x")
    server = WarmPytest(PY) if warm else None
    try:
        # -s: pytest's output capture would hold three (unlinked) temp files of its own in /tmp
        return run_tests(root, [PY, "-m", "pytest", "-p", "no:xdist", "-s"], ["test_cap.py"], 60, warm=server)
    finally:
        if server is not None:
            server.close()


def _created(output: str) -> tuple[int, int, str, int]:
    """(inodes free when the test started, files it made, the errno that stopped it, inodes free then)."""
    m = re.search(r"BEFORE (\d+) CREATED (\d+) ERRNO (\S+) FREE (\d+)", output)
    assert m, output[-1500:]
    return int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4))


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
@pytest.mark.parametrize("where", ["many", "/tmp/many"], ids=["slot", "tmp"])
def test_the_kernel_stops_the_file_past_the_limit(tmp_path: Path, no_looks: None, where: str, warm: bool) -> None:
    assert storage.files_level() == "tmpfs", mountns.capping_problem()
    run = _run(tmp_path, where, warm)
    before, made, err, free = _created(run.output)
    made += 1  # the directory they are made in
    assert err == "28" and free == 0, run.output[-800:]  # ENOSPC: out of inodes, not bytes
    assert made == before  # stopped by the kernel exactly when the inodes ran out
    if warm and where == "many":
        # a warm server's slot holds WARM_FILE_SLACK entries beyond the tree it started with
        assert FILES < made <= FILES + storage.FILE_MARGIN + storage.WARM_FILE_SLACK
    elif where == "many":
        assert made == FILES + storage.FILE_MARGIN  # nothing else in the slot is the run's
    else:
        # /tmp: less when pytest's plugins made a temp dir of their own there (they are the run's)
        assert FILES - 10 <= made <= FILES + storage.FILE_MARGIN
    assert run.warm is warm
    assert run.limit == "file limit", (run.limit, run.output[-800:])


UNSET = mountns.MOUNT.replace('-o "$2"', '-o size=1m').replace('-o "$4"', '-o size=1m')
"""A step whose mounts set no inode count (a kernel that ignored the option)."""
FAILS = 'echo "unshare: unshare failed: Operation not permitted" >&2; exit 1'
"""A step that cannot run (user namespaces that cannot nest)."""


@pytest.mark.parametrize(("step", "why"), [(UNSET, "the inode count is not set"), (FAILS, "mount step")],
                         ids=["count-unset", "step-fails"])
def test_where_the_kernel_cannot_cap_them_files_are_watched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            step: str, why: str) -> None:
    """The mount step broken: the self-test finds out, the sandbox runs without the step (its
    promises kept: the self-test passes), and the watcher still stops the run."""
    monkeypatch.setattr(mountns, "MOUNT", step)
    monkeypatch.setattr(mountns, "_off", None)
    sandbox._probe.cache_clear()
    _limits(monkeypatch)
    try:
        assert sandbox.bwrap_problem() is None and sandbox.clean_room_problem() is None
        assert storage.files_level() == "watch"
        assert why in (mountns.capping_problem() or "")
        box = sandbox.Box(writable=(), chdir=Path(room.TREE), scratch_size=1 << 20, scratch_files=10)
        assert mountns.MOUNT not in sandbox.wrap(["true"], box)
        run = _run(tmp_path, "many", False)
        assert run.limit == "file limit", (run.limit, run.output[-800:])
        assert "ERRNO 28" not in run.output  # nothing made it fail: the watcher stopped it
    finally:
        sandbox._probe.cache_clear()
        monkeypatch.undo()
        sandbox._probe.cache_clear()
        from reviewui.core.run import limits

        limits._fitted.cache_clear()
    assert storage.files_level() == "tmpfs"


def test_the_self_test_runs_through_the_mount_step() -> None:
    """The sandbox's one self-test (no privileges, uid never 0) is made through the same step
    every capped run starts with."""
    size, files = mountns.self_test_slot()
    box = sandbox.Box(writable=(), chdir=Path("/"), python=PY, scratch_size=size, scratch_files=files)
    argv = sandbox.shown(sandbox.wrap([PY, "-c", "pass"], box))  # bwrap's options as it reads them
    assert mountns.MOUNT in argv
    step = argv.index(mountns.MOUNT)
    # As root the step makes no user namespace (its mounts are root's, in a mount namespace of its
    # own) and drops to run_uid.RUN_UID before bwrap: the run is never kernel uid 0 (issue 37).
    own = ["--mount", "--propagation", "private"] if os.geteuid() == 0 else ["--user", "--map-root-user", "--mount"]
    assert argv[step - 6:step - 2] == [mountns._tools()[0], *own]
    assert f"nr_inodes={1 + mountns.SELF_TEST_FILES}," in argv[step + 3]
    assert "--uid" in argv and argv[argv.index("--uid") + 1] != "0"


@pytest.mark.parametrize(("args", "made"), [
    (["--dir", "/tmp/run"], 1),
    (["--ro-bind", "/x", "/tmp/a/b/c", "--dir", "/tmp/a/b", "--symlink", "t", "/tmp/a/l"], 4),
    (["--setenv", "/tmp/no", "/tmp/no", "--bind", "/tmp/x", "/elsewhere", "--", "--dir", "/tmp/after"], 0),
    (["--uid", "1", "--dir", "/tmpfoo/x", "--file", "3", "/tmp//f"], 1),
])
def test_made_under_counts_what_bwrap_makes(args: list[str], made: int) -> None:
    assert mountns.made_under(args, "/tmp") == made


LIFT = '''import ctypes, os, subprocess

libc = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MNT_DETACH = 32, 2


def lift(p):
    # the syscalls themselves (mount(8) refuses a uid other than 0 before asking the kernel)
    libc.mount(b"none", p.encode(), None, MS_REMOUNT, b"nr_inodes=0,size=0")
    if libc.umount2(p.encode(), MNT_DETACH) == 0:
        libc.mount(b"tmpfs", p.encode(), b"tmpfs", 0, b"")
    # and from a nested user namespace, where the run is uid 0 with every capability
    for line in ("mount -o remount,nr_inodes=0,size=0 " + p,
                 "umount -l " + p + " && mount -t tmpfs tmpfs " + p + " && touch " + p + "/x"):
        try:
            subprocess.run(["unshare", "-rm", "sh", "-c", line], capture_output=True, timeout=20)
        except OSError:
            pass


def test_lift_the_cap():
    before = {p: os.statvfs(p).f_files for p in ("/reviewui/slot", "/tmp")}
    for p in before:
        lift(p)
    after = {p: os.statvfs(p).f_files for p in before}
    assert after == before, (before, after)
    assert not os.path.exists("/tmp/x") and not os.path.exists("/reviewui/slot/x")
'''


def test_a_run_cannot_lift_its_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Remounting the slot or /tmp without a count, directly or from a nested user namespace, is
    refused: the superblocks belong to the step's namespace, where the run has no privilege."""
    _limits(monkeypatch)
    root = tmp_path / "a" / "tree"
    root.mkdir(parents=True)
    (root / "test_lift.py").write_text(LIFT)
    run = run_tests(root, [PY, "-m", "pytest", "-p", "no:xdist"], ["test_lift.py"], 60)
    assert storage.files_level() == "tmpfs"
    assert run.returncode == 0 and run.limit is None, run.output[-1500:]
