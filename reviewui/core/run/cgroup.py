"""Whole-run memory and process limits through a cgroup, where reviewui can make one.

RLIMIT_AS bounds each process of a run, not the run: eight children of 256 MiB
are 2 GiB. And RLIMIT_NPROC is never enforced for host root (kuid 0), so as
root a run could fork without end. A cgroup bounds the run as a whole: every
process of a run (bwrap, the test command, whatever it forks, the private tmpfs
pages it fills) is charged to one cgroup made for it, with `memory` and `pids`
limits. Where reviewui may create child cgroups (root in most containers and CI
runners, a delegated cgroup v2 subtree, cgroup v1 hierarchies writable by us),
each run gets one; elsewhere `level()` is "per-process" and the rlimits alone
apply (RLIMIT_NPROC then caps processes for an ordinary user).

A run joins its cgroup before anything of it starts: the argv is prefixed with a
`/bin/sh -c` that writes its own pid into the cgroup and then execs the rest
(no preexec function, which is unsafe with threads).
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import shlex
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

from reviewui.core.run.limits import MIB, Limits, fmt_size

_ids = itertools.count(1)


@dataclass(frozen=True)
class _Parents:
    """Where this process may make child cgroups: per controller, the parent dir."""

    version: int
    memory: Path
    pids: Path


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, fs type, super options) of every cgroup mount, from /proc/self/mountinfo."""
    out: list[tuple[str, str, str]] = []
    try:
        text = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            out.append((fields[4].replace("\\040", " "), tail[0], tail[2]))
    return out


def _own_paths() -> dict[str, str]:
    """Controller (or "" for v2) → this process's cgroup path, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    try:
        text = Path("/proc/self/cgroup").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for name in parts[1].split(",") if parts[1] else [""]:
                out[name] = parts[2]
    return out


def _usable(parent: Path, files: tuple[str, ...]) -> bool:
    """True when a child cgroup made under `parent` has every file of `files` and we may write them."""
    probe = parent / f"reviewui-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        return all(os.access(probe / f, os.W_OK) for f in (*files, "cgroup.procs"))
    finally:
        try:
            probe.rmdir()
        except OSError:
            pass


@functools.lru_cache(maxsize=1)
def _parents() -> _Parents | None:
    if os.environ.get("REVIEWUI_NO_CGROUP") == "1":
        return None
    own = _own_paths()
    mounts = _mounts()
    v1 = {opt: Path(point) for point, kind, opts in mounts if kind == "cgroup"
          for opt in opts.split(",") if opt in ("memory", "pids")}
    if "memory" in v1 and "pids" in v1 and "memory" in own and "pids" in own:
        memory = v1["memory"] / own["memory"].lstrip("/")
        pids = v1["pids"] / own["pids"].lstrip("/")
        if _usable(memory, ("memory.limit_in_bytes",)) and _usable(pids, ("pids.max",)):
            _sweep(memory)
            _sweep(pids)
            return _Parents(1, memory, pids)
    v2 = next((Path(point) for point, kind, _ in mounts if kind == "cgroup2"), None)
    if v2 is not None and "" in own:
        parent = v2 / own[""].lstrip("/")
        if not _usable(parent, ("memory.max", "pids.max")):
            try:  # a delegated subtree may need the controllers enabled for its children
                (parent / "cgroup.subtree_control").write_text("+memory +pids")
            except OSError:
                return None
        if _usable(parent, ("memory.max", "pids.max")):
            _sweep(parent)
            return _Parents(2, parent, parent)
    return None


def level() -> str:
    """How a run's memory and processes are bounded here: "cgroup-v1", "cgroup-v2" or "per-process"."""
    parents = _parents()
    return f"cgroup-v{parents.version}" if parents is not None else "per-process"


SPLIT_PROCESSES = 16
"""Without a cgroup, the processes (threads count) a run may have at most, so that each may have a
share of `memory-limit` (the reviewer's lower `process-limit` wins)."""
PROCESS_FLOOR = 64 * MIB
"""Without a cgroup, the smallest share of `memory-limit` a process gets (a Python running pytest
needs about that much address space): fewer processes rather than less each."""


def per_process(limits: Limits) -> tuple[int, int]:
    """(address space of each process, processes) of a run: with a cgroup, `limits` as they are
    (the cgroup bounds the run as a whole); without one, `memory-limit` split so that the
    per-process cap times the process cap is no larger than it: the limit holds for the run as a
    whole, though no process may use all of it."""
    if level() != "per-process":
        return limits.memory, limits.processes
    count = max(1, min(limits.processes, SPLIT_PROCESSES, limits.memory // PROCESS_FLOOR))
    return limits.memory // count, count


def split_note(limits: Limits) -> str | None:
    """The one line saying how `memory-limit` holds without a cgroup (None with one)."""
    if level() != "per-process":
        return None
    each, count = per_process(limits)
    return (f"memory-limit {fmt_size(limits.memory)} holds for each run as a whole as {count} processes (threads "
            f"count) of at most {fmt_size(each)} each: no cgroup reviewui may use here (root, or a delegated "
            "cgroup v2 subtree, gives one)")


class RunGroup:
    """One run's cgroup (one per controller with v1): made by `create`, removed by `close`."""

    def __init__(self, parents: _Parents, limits: Limits) -> None:
        name = f"reviewui-{os.getpid()}-{_pid_namespace()}-{next(_ids)}"
        self.version = parents.version
        self.dirs = [parents.memory / name] if parents.version == 2 else [parents.memory / name, parents.pids / name]
        for d in self.dirs:
            d.mkdir()
        mem, pids = self.dirs[0], self.dirs[-1]
        if self.version == 2:
            (mem / "memory.max").write_text(str(limits.memory))
            try:
                (mem / "memory.swap.max").write_text("0")
            except OSError:
                pass  # no swap accounting: nothing to bound
        else:
            (mem / "memory.limit_in_bytes").write_text(str(limits.memory))
        (pids / "pids.max").write_text(str(limits.processes))
        self._oom0, self._max0 = self._counts()

    @classmethod
    def create(cls, limits: Limits) -> "RunGroup | None":
        """A cgroup for one run, or None where none can be made (the rlimits alone apply)."""
        parents = _parents()
        if parents is None:
            return None
        try:
            return cls(parents, limits)
        except OSError:
            return None

    def prefix(self) -> list[str]:
        """The argv prefix that puts the command (and all it starts) into this cgroup, then execs it."""
        joins = " && ".join(f"echo $$ > {shlex.quote(str(d / 'cgroup.procs'))}" for d in self.dirs)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "sh"]

    def _counts(self) -> tuple[int, int]:
        mem, pids = self.dirs[0], self.dirs[-1]
        oom = _field(mem / ("memory.events" if self.version == 2 else "memory.oom_control"), "oom_kill")
        return oom, _field(pids / "pids.events", "max")

    def hit(self) -> str | None:
        """"memory limit" / "process limit" when the run hit one since the group was made (or since
        the last `mark`), else None."""
        oom, most = self._counts()
        if oom > self._oom0:
            return "memory limit"
        if most > self._max0:
            return "process limit"
        return None

    def mark(self) -> None:
        """Count limit hits from now on (a warm server's group serves one run after another)."""
        self._oom0, self._max0 = self._counts()

    def close(self) -> None:
        """Remove the cgroup (once its processes are gone; one still dying is left to the kernel)."""
        for d in self.dirs:
            _remove_when_empty(d, patience=1.0)


def _remove_when_empty(group: Path, patience: float) -> None:
    """Remove cgroup directory `group` once the processes still leaving it are gone, trying for
    about `patience` seconds (then it is left: a later sweep removes it).

    Retried at 1 ms, doubling to 50 ms: a run's last processes are usually gone within a few
    milliseconds of its end, and every sweep closes its warm servers' cgroups on the way out,
    so a first pause of 50 ms was paid by nearly every sweep.
    """
    pause, waited = 0.001, 0.0
    while True:
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if waited >= patience:
                return
            threading.Event().wait(pause)
            waited += pause
            pause = min(pause * 2, 0.05)


def _field(path: Path, key: str) -> int:
    try:
        for line in path.read_text(encoding="ascii", errors="replace").splitlines():
            k, _, v = line.partition(" ")
            if k == key and v.strip().isdigit():
                return int(v)
    except OSError:
        pass
    return 0


_NAME = re.compile(r"^reviewui-(\d+)-(?:(\d+)-)?\d+$")
"""A run cgroup's name: its maker's pid, the maker's pid namespace (absent in older reviewuis), a count."""


def _pid_namespace() -> int:
    """This process's pid namespace (its inode; 0 when unknown): a cgroup's owner pid means
    something only in the namespace it was made in (containers may share a cgroup parent)."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _sweep(parent: Path) -> None:
    """Remove the cgroups of reviewui processes that are gone (a crash leaves them behind), killing
    what is still in them first: a run's processes outlive a reviewui killed mid-run when they miss
    bubblewrap's parent-death signal (a sandbox's pid 1 left waiting, which ignores SIGTERM). Only
    cgroups made in this pid namespace whose maker is gone are touched; one of an older reviewui
    (no namespace in its name) is only removed when empty, as before."""
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    ours = _pid_namespace()
    for entry in entries:
        m = _NAME.match(entry.name)
        if not m or int(m.group(1)) == os.getpid() or Path(f"/proc/{m.group(1)}").exists():
            continue
        if m.group(2) is not None and ours and int(m.group(2)) == ours:
            _kill_members(entry)
        # the killed are still leaving: waited for when this namespace killed them, else tried once
        _remove_when_empty(entry, patience=1.0 if m.group(2) is not None else 0.0)


def _kill_members(group: Path) -> None:
    """SIGKILL every process left in cgroup `group` (pids as this namespace sees them)."""
    kill = group / "cgroup.kill"  # cgroup v2, Linux 5.14+: the kernel does it all
    if kill.exists():
        try:
            kill.write_text("1")
            return
        except OSError:
            pass
    try:
        members = (group / "cgroup.procs").read_text(encoding="ascii").split()
    except OSError:
        return
    for pid in members:
        if pid.isdigit() and int(pid) > 1:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
