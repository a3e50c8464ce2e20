"""A crashed reviewui's run processes are killed by the next reviewui's cgroup sweep (issue 44).

A run's processes live in a cgroup named after the reviewui that made it (its pid and pid
namespace). When that reviewui is killed mid-run, a sandbox's pid 1 that missed bubblewrap's
parent-death signal stays, ignoring SIGTERM. The sweep kills what is left in the cgroups of makers
that are gone, made in this pid namespace, and only those. Run here on stand-in cgroup folders
(their `cgroup.procs` written by the test) so it holds as an ordinary user too; the kernel's own
folders differ only in that rmdir then succeeds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from reviewui.core.run import cgroup
from reviewui.core.run.limits import Limits


def _gone_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


def _group(parent: Path, name: str, pid: int) -> Path:
    d = parent / name
    d.mkdir()
    (d / "cgroup.procs").write_text(f"{pid}\n")
    return d


@pytest.mark.parametrize("maker", ["gone-here", "gone-elsewhere", "alive", "older-reviewui"])
def test_only_a_gone_maker_s_leftovers_in_this_namespace_are_killed(tmp_path: Path, maker: str,
                                                                    sleeper: subprocess.Popen[bytes]) -> None:
    ns = cgroup._pid_namespace()
    assert ns, "a pid namespace inode on Linux"
    name = {"gone-here": f"reviewui-{_gone_pid()}-{ns}-1",
            "gone-elsewhere": f"reviewui-{_gone_pid()}-{ns + 1}-1",  # another container sharing the parent
            "alive": f"reviewui-{os.getppid()}-{ns}-1",
            "older-reviewui": f"reviewui-{_gone_pid()}-7"}[maker]
    _group(tmp_path, name, sleeper.pid)
    (tmp_path / "not-ours").mkdir()
    cgroup._sweep(tmp_path)
    if maker == "gone-here":
        assert sleeper.wait(timeout=10) == -9
    else:
        with pytest.raises(subprocess.TimeoutExpired):
            sleeper.wait(timeout=0.3)
    assert (tmp_path / "not-ours").is_dir()


def test_a_run_group_s_name_says_its_maker_and_namespace_to_the_sweep(tmp_path: Path) -> None:
    group = cgroup.RunGroup(cgroup._Parents(2, tmp_path, tmp_path), Limits(memory=256 << 20, disk=1 << 30))
    m = cgroup._NAME.match(group.dirs[0].name)
    assert m is not None and (int(m.group(1)), int(m.group(2))) == (os.getpid(), cgroup._pid_namespace())
    cgroup._sweep(tmp_path)  # its maker is alive: left alone
    assert group.dirs[0].is_dir()


class _Busy:
    """A stand-in cgroup folder whose rmdir is refused (EBUSY, processes still leaving) `busy` times."""

    def __init__(self, busy: int) -> None:
        self.busy, self.tries = busy, 0

    def rmdir(self) -> None:
        self.tries += 1
        if self.tries <= self.busy:
            raise OSError(16, "Device or resource busy")


def _pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    pauses: list[float] = []
    monkeypatch.setattr(cgroup.threading.Event, "wait", lambda self, timeout=None: pauses.append(timeout) or True)
    return pauses


def test_a_group_left_a_moment_later_is_removed_after_a_millisecond_not_fifty(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every sweep closes its warm servers' groups as their last processes leave: the first retry
    # comes at 1 ms and doubles, so a group empty a few ms later costs ms, not a fixed 50 ms pause.
    pauses = _pauses(monkeypatch)
    group = _Busy(busy=3)
    cgroup._remove_when_empty(group, patience=1.0)  # type: ignore[arg-type]
    assert group.tries == 4
    assert pauses == [0.001, 0.002, 0.004]


def test_a_group_that_stays_busy_is_left_after_its_patience(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses = _pauses(monkeypatch)
    group = _Busy(busy=10**6)
    cgroup._remove_when_empty(group, patience=1.0)  # type: ignore[arg-type]
    assert max(pauses) == 0.05 and 1.0 <= sum(pauses) < 1.05  # about a second, as before, then left
    pauses.clear()
    once = _Busy(busy=10**6)
    cgroup._remove_when_empty(once, patience=0.0)  # type: ignore[arg-type]
    assert once.tries == 1 and pauses == []  # another namespace's group: tried once, never waited on
