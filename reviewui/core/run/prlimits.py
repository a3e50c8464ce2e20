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
    hit one, else None.

    What the tests themselves hit (their own errors, pytest's FAILURES and ERRORS sections) is
    judged first: a test stopped by the disk limit whose failure report then ran pytest's plugins
    out of memory (hypothesis imports itself for the summary) hit the disk limit.
    """
    if "MemoryError" in exceptions:
        return "memory limit"
    own = "\n".join(e for e in exceptions if e)
    for text in (own, _reports(output), output):
        hit = _hit_in(text)
        if hit is not None:
            return hit
    return None


def _reports(output: str) -> str:
    """The tests' own failure reports in pytest's output (its FAILURES and ERRORS sections)."""
    parts = []
    for title in ("= FAILURES =", "= ERRORS ="):
        at = output.find(title)
        if at >= 0:
            end = output.find("short test summary info", at)
            parts.append(output[at:end if end >= 0 else len(output)])
    return "\n".join(parts)


def _hit_in(text: str) -> str | None:
    """The limit `text` shows was hit, else None."""
    if "MemoryError" in text or "Cannot allocate memory" in text or "std::bad_alloc" in text:
        return "memory limit"
    if "File too large" in text or "No space left on device" in text or "OSError: [Errno 27]" in text:
        return "disk limit"
    # EAGAIN from fork (not from a non-blocking socket, which says the same words)
    if "fork: retry" in text or "fork: Resource temporarily unavailable" in text or "Cannot fork" in text \
            or "can't start new thread" in text \
            or ("BlockingIOError" in text and ("os.fork()" in text or "_fork_exec" in text)):
        return "process limit"
    return None
