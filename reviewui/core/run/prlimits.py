"""The per-process limits of a sandboxed run: set by `prlimit` in front of bwrap (address space,
file size) and, for the process limit, inside the run's own user namespace; and a failed run's
output read for the limit it hit.

Without a cgroup, `memory-limit` is split (cgroup.per_process): at most a few processes of a share
each, so that the limit holds for the run as a whole. RLIMIT_NPROC is set inside the run's user
namespace (the command starts with the system's `prlimit --nproc`), where it counts the run's own
processes only: set in front of the namespaces it would count every process the user has on the
host (and, as root, every run's: they share run_uid.RUN_UID).
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path
from typing import Sequence

from reviewui.core.run import cgroup, sandbox_world
from reviewui.core.run.limits import Limits


@functools.lru_cache(maxsize=1)
def _inside_prlimit() -> str | None:
    """util-linux's prlimit in the system's dirs, which every run sees: set inside a run."""
    exe = shutil.which("prlimit", path="/usr/bin:/bin:/usr/sbin:/sbin")
    return exe if exe is not None and sandbox_world.covered(Path(exe)) else None


def outside_args(lim: Limits) -> list[str]:
    """The per-process limits set in front of the sandbox: address space (cgroup.per_process's
    share without a cgroup), file size, and the process limit where it cannot be set inside."""
    exe = shutil.which("prlimit")
    if exe is None:
        return []
    memory, processes = cgroup.per_process(lim)
    nproc = [] if _inside_prlimit() is not None else [f"--nproc={processes}"]
    return [exe, f"--as={memory}", f"--fsize={lim.disk}", *nproc, "--"]


def inside_args(lim: Limits) -> list[str]:
    """The process limit, set inside the run's user namespace (the command starts with it): there
    RLIMIT_NPROC counts the run's own processes only. Set in front of the namespaces it would
    count every process the user has on the host, and as root (RUN_UID) every run's."""
    exe = _inside_prlimit()
    if exe is None:
        return []
    _, processes = cgroup.per_process(lim)
    return [exe, f"--nproc={processes}", "--"]


def preexec_limits(lim: Limits) -> None:
    """Set the run's limits in the child (used when the `prlimit` tool is missing)."""
    import resource

    memory, processes = cgroup.per_process(lim)
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (lim.disk, lim.disk))
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))


def needs_preexec() -> bool:
    """True when limits must be set by a preexec function (no `prlimit` tool)."""
    return shutil.which("prlimit") is None


def limit_reason(output: str, exceptions: Sequence[str | None] = ()) -> str | None:
    """"memory limit" / "disk limit" / "process limit" when a failed run's output or errors show it
    hit one, else None."""
    if "MemoryError" in exceptions or "MemoryError" in output or "Cannot allocate memory" in output \
            or "std::bad_alloc" in output:
        return "memory limit"
    if "File too large" in output or "No space left on device" in output or "OSError: [Errno 27]" in output:
        return "disk limit"
    # EAGAIN from fork (not from a non-blocking socket, which says the same words)
    if "fork: retry" in output or "fork: Resource temporarily unavailable" in output or "Cannot fork" in output \
            or "can't start new thread" in output \
            or ("BlockingIOError" in output and ("os.fork()" in output or "_fork_exec" in output)):
        return "process limit"
    return None
