"""The resource limits of one sandboxed run, fitted to the environment reviewui itself runs in.

A CI runner, a container or a shared login host often hands reviewui an
inherited *hard* limit (`ulimit -v`, `-f`, `-u`) that neither an ordinary
user nor root without CAP_SYS_RESOURCE can raise. Asking for more than that
makes every run fail before it starts, so each limit is clamped to the
inherited hard limit, and the clamp is said once (`clamp_notes()`).

The configured values come from the reviewer only (user config keys
`memory-limit`, `disk-limit`, `process-limit`, `file-limit`, `output-limit`; environment
REVIEWUI_MEMORY_LIMIT / REVIEWUI_DISK_LIMIT / REVIEWUI_PROCESS_LIMIT win),
never from the repository under review.

What each limit bounds (see `sandbox.py` for how they are applied):
- `memory`: the address space of every process of the run (RLIMIT_AS);
- `disk`: the largest file a run may write (RLIMIT_FSIZE), the size of its
  private /tmp and HOME, and the bytes a run may add to its scratch tree;
- `processes`: processes of the run at once (RLIMIT_NPROC, counted per user
  namespace, so only the sandbox's own processes count);
- `files`: files a run may create in its scratch tree, HOME and work dir, and
  in its private /tmp (the kernel's inode count where `storage.py` can set it);
- `output`: bytes a run may write to its output in all.
"""

from __future__ import annotations

import functools
import os
import resource
from dataclasses import dataclass

from reviewui.core.config import load_user_prefs

GIB = 1024**3
MIB = 1024**2

DEFAULT_PROCESSES = 512
"""Processes a run may have at once unless the reviewer says otherwise (a pytest-xdist run of a
large suite stays far below; a fork bomb does not)."""
DEFAULT_FILES = 100_000
"""Files a run may create in its writable directories unless the reviewer says otherwise."""
DEFAULT_OUTPUT = 64 * MIB
"""Bytes of output (stdout and stderr) a run may write before it is stopped as `broken`
("output limit"); reviewui keeps only its head and tail in memory either way."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run."""

    memory: int
    """Address-space limit in bytes (RLIMIT_AS) of every process of the run."""
    disk: int
    """Largest file a run may write (RLIMIT_FSIZE), its private tmp's size, and what it may add to
    its writable directories, in bytes."""
    processes: int = DEFAULT_PROCESSES
    """Processes the run may have at once (RLIMIT_NPROC inside the run's user namespace)."""
    files: int = DEFAULT_FILES
    """Files the run may create in its writable directories."""
    output: int = DEFAULT_OUTPUT
    """Bytes of output the run may write in all."""


def size(value: object, default: int) -> int:
    """Parse a byte size from config: an int, or text like "512M" / "2G"; `default` when unusable."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, str) and value.strip():
        text = value.strip().upper().rstrip("B")
        mult = {"K": 1024, "M": MIB, "G": GIB}.get(text[-1:], 1)
        try:
            parsed = int(float(text.rstrip("KMG")) * mult)
        except ValueError:
            return default
        return parsed if parsed > 0 else default
    return default


def _count(value: object, default: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
        return int(value)
    return default


def _ram() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 8 * GIB


def inherited_hard(which: int) -> int | None:
    """The hard limit this process inherited for `which` (a resource.RLIMIT_*), None when unlimited."""
    try:
        hard = resource.getrlimit(which)[1]
    except (OSError, ValueError):
        return None
    return None if hard == resource.RLIM_INFINITY else int(hard)


def fmt_size(n: int) -> str:
    """`n` bytes as the config writes them (`512M`, `2G`, `1.5G`)."""
    return _fmt(n)


def _fmt(n: int) -> str:
    for unit, scale in (("G", GIB), ("M", MIB), ("K", 1024)):
        if n >= scale:
            return f"{n / scale:.1f}{unit}".replace(".0" + unit, unit)
    return str(n)


@dataclass(frozen=True)
class Fitted:
    """The limits a run gets, and what was clamped to fit the inherited hard limits."""

    limits: Limits
    notes: tuple[str, ...]
    """One line per clamped limit, naming the config key (empty when nothing was clamped)."""


def _clamp(value: int, which: int, key: str, fmt: bool, notes: list[str]) -> int:
    hard = inherited_hard(which)
    if hard is None or value <= hard:
        return value
    shown = (_fmt(value), _fmt(hard)) if fmt else (str(value), str(hard))
    notes.append(f"{key} {shown[0]} lowered to the inherited hard limit {shown[1]}")
    return hard


@functools.lru_cache(maxsize=8)
def _fitted(memory: object, disk: object, processes: object, files: object, output: object) -> Fitted:
    notes: list[str] = []
    default_mem = max(2 * GIB, _ram() // max(1, os.cpu_count() or 1))
    mem = _clamp(size(memory, default_mem), resource.RLIMIT_AS, "memory-limit", True, notes)
    dsk = _clamp(size(disk, 2 * GIB), resource.RLIMIT_FSIZE, "disk-limit", True, notes)
    procs = _clamp(_count(processes, DEFAULT_PROCESSES), resource.RLIMIT_NPROC, "process-limit", False, notes)
    return Fitted(Limits(memory=mem, disk=dsk, processes=procs, files=_count(files, DEFAULT_FILES),
                         output=size(output, DEFAULT_OUTPUT)), tuple(notes))


def fitted() -> Fitted:
    """The run limits from the reviewer's settings, clamped to the inherited hard limits."""
    prefs = load_user_prefs()
    return _fitted(os.environ.get("REVIEWUI_MEMORY_LIMIT") or _hashable(prefs.get("memory-limit")),
                   os.environ.get("REVIEWUI_DISK_LIMIT") or _hashable(prefs.get("disk-limit")),
                   os.environ.get("REVIEWUI_PROCESS_LIMIT") or _hashable(prefs.get("process-limit")),
                   _hashable(prefs.get("file-limit")), _hashable(prefs.get("output-limit")))


def _hashable(value: object) -> object:
    return value if isinstance(value, (int, str)) or value is None else None


def limits() -> Limits:
    """The limits of a run (see `fitted`): a share of RAM per job (RAM / cores, at least 2 GiB),
    2 GiB of disk, DEFAULT_PROCESSES processes and DEFAULT_FILES files unless configured."""
    return fitted().limits


def clamp_notes() -> tuple[str, ...]:
    """What was lowered to fit the inherited hard limits, one line each (shown once per command)."""
    return fitted().notes
