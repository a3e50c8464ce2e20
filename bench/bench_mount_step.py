"""What the inode-count step costs a cold run: a sandboxed `true` with the mount step in front of bwrap
(reviewui/core/run/mountns.py) vs the same sandbox with bwrap's own tmpfs, interleaved.

Prints the median milliseconds of each and of the difference (the step: one `unshare`, one `sh`,
two `mount`s; a warm server pays it once). Usage: python bench/bench_mount_step.py [N]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

from reviewui.core.run import mountns, room, sandbox, storage


def _time(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    """Run the bench and print the step's cost."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    if sandbox.bwrap_problem() or storage.files_level() != "tmpfs":
        print(f"the step cannot run here: {sandbox.bwrap_problem() or mountns.capping_problem()}")
        return
    lim = sandbox.limits()
    box = sandbox.Box(writable=(), chdir=Path("/"), limits=lim, python=sys.executable, scratch_size=64 << 20,
                      scratch_files=storage.cold_inodes(40, lim.files),
                      scratch_dirs=(room.TREE, storage.home_inside()))
    capped = sandbox.wrap(["/bin/true"], box)
    with mock.patch.object(mountns, "_off", "bench: without the step"):
        plain = sandbox.wrap(["/bin/true"], box)
    assert mountns.MOUNT in capped and mountns.MOUNT not in plain
    _time(capped), _time(plain)
    pairs = [(_time(capped), _time(plain)) for _ in range(n)]
    with_step = statistics.median(p[0] for p in pairs)
    without = statistics.median(p[1] for p in pairs)
    extra = statistics.median(p[0] - p[1] for p in pairs)
    print(f"sandboxed true: with the step {1000 * with_step:.1f} ms, without {1000 * without:.1f} ms, "
          f"the step {1000 * extra:.1f} ms a cold run")


if __name__ == "__main__":
    main()
