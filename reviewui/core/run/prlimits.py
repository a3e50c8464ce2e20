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
import re
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


def limit_reason(output: str, failures: Sequence[tuple[str | None, str, str]] = ()) -> str | None:
    """"memory limit" / "disk limit" / "process limit" when a failed run hit one, else None.

    `failures` are the failed tests of the run's JUnit report, (exception type, message, traceback
    tail) each: when there are any, they alone decide, by the type of each one's own error (a
    MemoryError; an OSError saying the file is too large or the disk full; a BlockingIOError from a
    fork). A phrase anywhere else says nothing: a test stopped by the disk limit whose report then
    ran pytest's plugins out of memory (hypothesis imports itself for the summary) hit the disk
    limit, and a test whose own source or assertion mentions "MemoryError" hit no limit at all.
    Without a failed test (no report: the run crashed, or the command is not pytest), the output is
    read for the phrases the limits leave.
    """
    if failures:
        for kind, message, detail in [*failures, *_summarized(output)]:
            hit = _failure_hit(kind, message, detail if detail is not None else output)
            if hit is not None:
                return hit
        return None
    return _hit_in(output)


_SUMMARY = re.compile(r"^(?:FAILED|ERROR) \S.* - ([A-Za-z_][\w.]*(?:Error|Exception))\b(?::? ?(.*))?$"
                      r"|^\S+:\d+: ([A-Za-z_][\w.]*(?:Error|Exception))$"
                      r"|^([A-Za-z_][\w.]*(?:Error|Exception))(?:: (.*))?$", re.MULTILINE)


def _summarized(output: str) -> list[tuple[str | None, str, str | None]]:
    """(type, message, None) of every exception pytest's own summary lines name (`FAILED id - OSError:
    …`, `file.py:9: MemoryError`) or a traceback ends with (a line of its own, as Python prints it): a
    forked child's failure whose report the JUnit file did not keep (the children of a test that forks
    run pytest's end too, or print their own traceback). Its traceback: the whole output. A test's
    source and its assertion's values never make such a line (pytest indents the one, prefixes the
    other with `E`)."""
    out: list[tuple[str | None, str, str | None]] = []
    for m in _SUMMARY.finditer(output[-LIMIT_SCAN:]):
        kind = (m.group(1) or m.group(3) or m.group(4)).rsplit(".", 1)[-1]
        out.append((kind, f"{kind}: {m.group(2) or m.group(5) or ''}", None))
    return out


LIMIT_SCAN = 1 << 20
"""Bytes of a run's output read for pytest's summary lines (its end: where pytest writes them)."""


_OS_ERRORS = frozenset({"OSError", "IOError", "BlockingIOError", "EnvironmentError"})


def _failure_hit(kind: str | None, message: str, detail: str) -> str | None:
    """The limit one failed test's own error shows, by its exception's type, else None."""
    if kind == "MemoryError" or (kind in _OS_ERRORS and "Cannot allocate memory" in message):
        return "memory limit"
    if kind in _OS_ERRORS and any(w in message for w in ("File too large", "[Errno 27]", "No space left on device",
                                                          "[Errno 28]")):
        return "disk limit"
    if (kind == "BlockingIOError" and ("os.fork()" in detail or "_fork_exec" in detail)) \
            or (kind == "RuntimeError" and "can't start new thread" in message):
        return "process limit"
    return None


def _hit_in(text: str) -> str | None:
    """The limit a run's output shows was hit, else None."""
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
