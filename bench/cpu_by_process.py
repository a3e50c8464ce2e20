"""Where a command's CPU goes, process by process, sandboxed runs included (Linux BSD process accounting).

A sweep's CPU is mostly spent in processes reviewui never waits on itself: the warm servers and
their forks live in bubblewrap's PID namespaces, so `time` and getrusage miss them. The kernel's
process accounting records every process that exits, in any namespace, with its CPU, its command
name, whether it exec'd after its fork, and its uid (a sandboxed run's is RUN_UID): enough to tell
the sandboxed interpreters' starts from their forks and from the host's own work.

Needs root (acct(2) asks for CAP_SYS_PACCT) and a kernel with CONFIG_BSD_PROCESS_ACCT_V3.
The kernel rounds each process's CPU to 10 ms ticks: many short processes (git) read as nothing.
Run: sudo python bench/cpu_by_process.py -- COMMAND [ARGS...]
"""

from __future__ import annotations

import collections
import ctypes
import os
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass

RECORD = struct.Struct("<BBHIIIIIIfHHHHHHHH16s")  # struct acct_v3, <linux/acct.h>
AFORK = 0x01  # ac_flag: forked but never exec'd
TICKS = 100  # AHZ: comp_t times count these


@dataclass(frozen=True)
class Exited:
    """One accounted process."""

    name: str
    forked_only: bool
    uid: int
    cpu: float


def _comp(value: int) -> int:
    """A comp_t: 13-bit mantissa, 3-bit base-8 exponent."""
    return (value & 0x1FFF) << (3 * ((value >> 13) & 7))


def read_records(path: str) -> list[Exited]:
    """The v3 records of an accounting file."""
    data = open(path, "rb").read()
    out = []
    for off in range(0, len(data) - RECORD.size + 1, RECORD.size):
        f = RECORD.unpack_from(data, off)
        if f[1] != 3:  # ac_version
            continue
        flag, uid, utime, stime, comm = f[0], f[4], f[10], f[11], f[18]
        out.append(Exited(comm.split(b"\0")[0].decode(errors="replace"), bool(flag & AFORK), uid,
                          (_comp(utime) + _comp(stime)) / TICKS))
    return out


def accounted(argv: list[str]) -> tuple[int, list[Exited]]:
    """Run `argv` with process accounting on; its exit code and every process that exited meanwhile
    (other processes of the machine too: run it on a quiet one)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd, path = tempfile.mkstemp(prefix="acct-")
    os.close(fd)
    try:
        if libc.acct(path.encode()) != 0:
            raise SystemExit(f"acct: {os.strerror(ctypes.get_errno())} (root and CONFIG_BSD_PROCESS_ACCT needed)")
        try:
            code = subprocess.call(argv)
        finally:
            libc.acct(None)
        return code, read_records(path)
    finally:
        os.unlink(path)


def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print(__doc__)
        return 2
    code, records = accounted(argv)
    rows: dict[tuple[str, str, int], list[float]] = collections.defaultdict(lambda: [0, 0.0])
    for r in records:
        row = rows[(r.name, "fork" if r.forked_only else "exec", r.uid)]
        row[0] += 1
        row[1] += r.cpu
    total = sum(r.cpu for r in records)
    print(f"exit {code}; {len(records)} processes, {total:.2f} s CPU (10 ms ticks each)")
    print(f"{'CPU s':>8} {'count':>6} {'per ms':>7}  name / exec or fork / uid")
    for (name, how, uid), (n, cpu) in sorted(rows.items(), key=lambda kv: -kv[1][1])[:30]:
        print(f"{cpu:8.2f} {int(n):6d} {cpu / n * 1000:7.1f}  {name} / {how} / {uid}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
