"""What a killed reviewui leaves behind (temp dirs, scratch trees, half-built pristines) the next start removes;
nothing is ever registered in the reviewer's repository."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from reviewui.core.run import tempdirs
from reviewui.core.run.sandbox import INSIDE_VAR
from reviewui.core.run.scratch_slots import scratch_root
from reviewui.core.run.worktree import WorktreePool
from tests.gitrepo import make_repo


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_temp_dirs_of_a_dead_reviewui_are_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(INSIDE_VAR, raising=False)  # a reviewui started by the reviewer, not inside a run
    dead = tmp_path / f"reviewui-run-{_dead_pid()}-abc"
    (dead / "home").mkdir(parents=True)
    (dead / "home" / "big").write_bytes(b"x" * 1000)
    os.chmod(dead / "home", 0o500)  # a hostile run made it read-only
    live = tmp_path / f"reviewui-run-{os.getppid()}-abc"  # a live process's: kept
    live.mkdir()
    other = tmp_path / "reviewui-notours"
    other.mkdir()
    assert tempdirs.sweep_stale(tmp_path) == 1
    assert not dead.exists() and live.exists() and other.exists()


def test_inside_a_sandboxed_run_nothing_is_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # reviewui's own suite runs reviewui inside a bite run: the outer run's dirs are bound into
    # its private /tmp, owned by a pid of another namespace. Swept, they took the outer run's
    # coverage data with them ("no such table: context") and broke its baseline.
    monkeypatch.setenv(INSIDE_VAR, "1")
    outer = tmp_path / f"reviewui-warm-{_dead_pid()}-abc"
    (outer / "cov").mkdir(parents=True)
    assert tempdirs.sweep_stale(tmp_path) == 0 and (outer / "cov").exists()


def test_private_tempdir_names_its_owner() -> None:
    d = tempdirs.private_tempdir("run")
    try:
        assert d.name.startswith(f"reviewui-run-{os.getpid()}-") and Path(tempfile.gettempdir()) == d.parent
    finally:
        d.rmdir()


@pytest.fixture
def shm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in memory filesystem (sticky and world-writable as /dev/shm), no temp dir named."""
    root = tmp_path / "shm"
    root.mkdir()
    os.chmod(root, 0o1777)
    for var in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv(INSIDE_VAR, raising=False)
    monkeypatch.setattr(tempdirs, "MEMORY_CANDIDATE", str(root))
    real = tempdirs._fs_type
    monkeypatch.setattr(tempdirs, "_fs_type", lambda path: "tmpfs" if path == str(root.resolve()) else real(path))
    monkeypatch.setattr(tempdirs, "MEMORY_ROOM", 1)
    return root.resolve()


def test_io_dirs_are_made_in_the_memory_root_and_other_temp_dirs_in_the_temp_dir(shm: Path) -> None:
    run, bite = tempdirs.io_tempdir(), tempdirs.private_tempdir("bite")
    try:
        assert run.name.startswith(f"reviewui-run-{os.getpid()}-")  # named as any temp dir of ours: swept alike
        assert run.parent == shm and stat.S_IMODE(run.stat().st_mode) == 0o700
        assert bite.parent == Path(tempfile.gettempdir()) != shm
        assert tempdirs.temp_roots() == (Path(tempfile.gettempdir()), shm)
    finally:
        run.rmdir()
        bite.rmdir()


def test_a_temp_dir_the_reviewer_names_wins_over_the_memory_root(shm: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    assert tempdirs.memory_root() == str(shm)  # the differential: without TMPDIR it is used
    named = tmp_path / "named"
    named.mkdir()
    monkeypatch.setenv("TMPDIR", str(named))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read again from TMPDIR
    assert tempdirs.memory_root() is None
    run = tempdirs.io_tempdir()
    assert run.parent == named
    run.rmdir()


@pytest.mark.parametrize("unfit", ["small", "not tmpfs", "no sticky bit", "missing"])
def test_a_memory_root_without_room_or_of_the_wrong_kind_is_passed_over(
        shm: Path, unfit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert tempdirs.memory_root() == str(shm)
    if unfit == "small":
        free = os.statvfs(shm)
        monkeypatch.setattr(tempdirs, "MEMORY_ROOM", 2 * free.f_blocks * free.f_frsize)  # more than it holds
    elif unfit == "not tmpfs":
        monkeypatch.setattr(tempdirs, "_fs_type", lambda path: "ext4")
    elif unfit == "no sticky bit":
        os.chmod(shm, 0o777)  # anyone could rename our dir away under a run
    else:
        monkeypatch.setattr(tempdirs, "MEMORY_CANDIDATE", str(shm / "absent"))
    assert tempdirs.memory_root() is None
    run = tempdirs.io_tempdir()
    assert run.parent == Path(tempfile.gettempdir())
    run.rmdir()


def test_a_dead_reviewuis_run_dirs_in_the_memory_root_are_swept(shm: Path) -> None:
    # In memory they would hold the machine's RAM until a reboot: the next start removes them.
    dead = shm / f"reviewui-run-{_dead_pid()}-abc"
    (dead / "home").mkdir(parents=True)
    (dead / "home" / "big").write_bytes(b"x" * 1000)
    live = shm / f"reviewui-run-{os.getppid()}-abc"
    live.mkdir()
    assert tempdirs.sweep_stale() >= 1
    assert not dead.exists() and live.exists()


def test_the_filesystem_type_is_read_from_the_mount_table() -> None:
    assert tempdirs._fs_type("/proc/self") == "proc"  # the longest mount point holding the path wins
    assert tempdirs._fs_type("/") not in ("", "proc")


def test_no_host_program_is_taken_from_a_run_dir_in_the_memory_root(shm: Path) -> None:
    from reviewui.core.run.command_types import outside_checkouts

    run = tempdirs.io_tempdir()
    try:
        (run / "python").write_text("#!/bin/sh\n")
        assert outside_checkouts("/usr/bin/env")  # the differential: an ordinary host path is fine
        assert not outside_checkouts(run / "python")
    finally:
        tempdirs.remove_tree(run)


def test_abandoned_slots_and_builds_are_emptied_by_the_next_start(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    pool = WorktreePool(rb.root, 2)
    pool.open()
    for _ in pool.scratches:
        with pool.acquire() as scratch:
            scratch.checkout("agent/work")
            scratch.add_file("left-by-a-test.bin", b"x" * 4096)
    # killed: the locks go with the process, nothing else is cleaned
    for fd in pool._locks:
        os.close(fd)
    root = scratch_root(rb.root)
    half = root / "pristine" / ".build-killed"
    half.mkdir()
    with WorktreePool(rb.root, 1) as again:
        assert [s.slot for s in again.scratches] == [0]
        assert not any((root / "slots" / "1").iterdir())  # the other slot's tree is gone
        assert not half.exists()
    assert rb.git("worktree", "list", "--porcelain").count("worktree ") == 1
    assert not [p for slot in (root / "slots").iterdir() for p in slot.iterdir()]


def test_require_refuses_in_one_line_unless_the_user_config_opts_in(monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewui.core.config import user_config_dir
    from reviewui.core.errors import ReviewError
    from reviewui.core.run import sandbox

    monkeypatch.setattr(sandbox, "bwrap_problem", lambda: "user namespaces are off")
    monkeypatch.setattr(sandbox, "_opt_in", False)
    with pytest.raises(ReviewError, match="without a sandbox: user namespaces are off") as e:
        sandbox.require()
    assert "\n" not in str(e.value) and "--unsandboxed" in str(e.value)
    cfg = user_config_dir() / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text("unsandboxed = true\n")
    assert sandbox.require() == "none" and sandbox.level() == "none"
    monkeypatch.setattr(sandbox, "bwrap_problem", lambda: None)
    assert sandbox.require() == "bwrap"


SLOW_TEST = (
    "import pathlib, time\n\n\n"
    "def test_slow():\n"
    # The run's own dir (room.RUN) is where a run's writes reach the host: its tree is a tmpfs copy
    # where bwrap can size one (run/storage.py), the host's scratch otherwise (then the cwd).
    "    run = pathlib.Path('/reviewui/io/run')\n"
    "    (run if run.is_dir() else pathlib.Path('.')).joinpath('started').write_text('x')\n"
    "    time.sleep(120)\n"
)


def test_kill_9_mid_sweep_leaves_nothing_after_the_next_start(tmp_path: Path) -> None:
    from tests.clirun import ROOT

    rb = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a + b\n",
                                       "tests/test_calc.py": SLOW_TEST},
                   {"calc.py": "def add(a, b):\n    return b + a\n"})
    rb.branch("agent/quick", "main")
    rb.commit({"tests/test_calc.py": "def test_quick():\n    pass\n", "calc.py": "def add(a, b):\n    return a + b  # x\n"})
    rb.checkout("main")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    env.pop(INSIDE_VAR, None)
    slots = scratch_root(rb.root) / "slots"
    proc = subprocess.Popen([sys.executable, "-m", "reviewui", "bite", "agent/work", "--base", "main"],
                            cwd=rb.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not list(slots.glob("*/tree/started")) and not list(tmp.glob("reviewui-*/run/started")):
            # the baseline's test is running: mid-sweep
            assert proc.poll() is None and time.monotonic() < deadline, "the sweep never started its tests"
            time.sleep(0.1)
        left = [p.name for p in tmp.iterdir() if p.name.startswith("reviewui-")]
        assert any(n.startswith(f"reviewui-bite-{proc.pid}-") for n in left), left
    finally:
        proc.kill()  # SIGKILL: no finally of reviewui's runs
        proc.wait()
    again = subprocess.run([sys.executable, "-m", "reviewui", "bite", "agent/quick", "--base", "main"],
                           cwd=rb.root, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode in (0, 1), again.stderr
    # issue 27: the scratch slots live in this user's reviewui-scratch-u<uid> (a run sees their path,
    # so not under the home); it stays, its slots emptied (checked below)
    slot_home = f"reviewui-scratch-u{os.getuid()}"
    assert [p.name for p in tmp.iterdir() if p.name.startswith("reviewui-") and p.name != slot_home] == []
    assert not [p for slot in slots.iterdir() for p in slot.iterdir()]  # every scratch tree emptied


def test_removing_a_tree_never_touches_what_holds_it(tmp_path: Path) -> None:
    """A second close removing a dir already gone chmod-ed its parent, /tmp itself, to 0700 (then no
    other user could use /tmp); a read-only subtree a run left still goes."""
    from reviewui.core.run.tempdirs import remove_tree

    holder = tmp_path / "holder"
    holder.mkdir()
    holder.chmod(0o1777)
    remove_tree(holder / "gone")
    assert holder.stat().st_mode & 0o7777 == 0o1777
    tree = holder / "tree"
    (tree / "ro" / "x").mkdir(parents=True)
    (tree / "ro").chmod(0o500)
    remove_tree(tree)
    assert not tree.exists() and holder.stat().st_mode & 0o7777 == 0o1777


def test_a_cold_run_and_a_warm_server_make_their_io_dirs_in_the_memory_root(shm: Path, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from reviewui.core.run import runner, warm_server_host
    from reviewui.core.run.warm_runner import WarmPytest

    made: list[Path] = []

    def recorded() -> Path:
        made.append(tempdirs.io_tempdir())
        return made[-1]

    monkeypatch.setattr(runner, "io_tempdir", recorded)
    monkeypatch.setattr(warm_server_host, "io_tempdir", recorded)
    tree = tmp_path / "slot" / "tree"
    tree.mkdir(parents=True)
    (tree / "test_ok.py").write_text("def test_ok():\n    pass\n")
    cold = runner.run_tests(tree, [sys.executable, "-m", "pytest"], ["test_ok.py"], 120)
    assert not cold.warm and [t.outcome for t in cold.tests] == ["passed"], cold.output
    warm = WarmPytest(sys.executable)
    try:
        run = runner.run_tests(tree, [sys.executable, "-m", "pytest"], ["test_ok.py"], 120, warm=warm)
        assert run.warm and [t.outcome for t in run.tests] == ["passed"], run.output
        assert warm._server(tree).io.parent == shm
    finally:
        warm.close()
    assert len(made) == 2 and all(d.parent == shm for d in made)
    assert not [p for p in shm.iterdir() if p.name.startswith(f"reviewui-run-{os.getpid()}-")]  # removed after
