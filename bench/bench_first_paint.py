"""First paint in a real terminal, wall clock from Enter to the first diff line, imports included.

Each run types the command into a tmux pane (a real terminal at 200x50),
presses Enter, and waits for the first hunk header (`@@ -`) in what the app
writes to the pane, read through `tmux pipe-pane` as it passes through the
terminal (a blocking read; the screen is then checked to show it, untimed).
reviewui opening the 400-file branch is compared with a bare Textual
app that runs `git diff` and shows it (bench/bare_diff_app.py), started the
same way. Both pay Python's start-up and their imports, as a reviewer does.
`--poll` times the older way instead: `tmux capture-pane` every 2 ms until the
header is on screen. That instrument starts a tmux client ~300 times a second,
about a core's worth of CPU on a 2-core machine, and so slows what it times:
both apps, and reviewui (two processes at start-up) more than the bare app
(bench/README.md, session 28).
Target (issue 44): reviewui <= 1.15x the bare app (issue 16's was 1.3x). The CPU each
process had used at its first paint is printed too (steadier than the wall clock under load).
Run: python bench/bench_first_paint.py [--reps N] [--against CHECKOUT]
`--against` times a second reviewui (another checkout's, e.g. `git worktree add /tmp/before REV`) in the
same rounds: on a shared machine the bare app's own median moves by 15 % between runs minutes apart, so a
change is judged against the code before it interleaved, not against yesterday's figure.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.genrepo import big_branch  # noqa: E402

MARK = "@@ -"
TIMEOUT = 30.0


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


_RUNS = [0]


def _cpu_of_app(session: str) -> float | None:
    """CPU seconds (user + system, reaped children such as git included) of the process the pane's
    shell runs now, or None when there is none."""
    shell = tmux("display", "-p", "-t", session, "#{pane_pid}").strip()
    try:
        kids = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
        fields = Path(f"/proc/{kids[0]}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(x) for x in fields[11:15]) / ticks  # utime, stime, cutime, cstime


CPU: list[tuple[str, float]] = []
"""(command, CPU seconds at its first paint) of every timed run."""


def time_one(session: str, command: str, quit_keys: list[str], poll: bool = False) -> float:
    """Seconds from Enter to the first hunk header, for one run of `command`: written to the pane
    (or, with `poll`, seen on screen by capture-pane). Its CPU time then goes to CPU: the load on a
    shared machine moves the wall clock far more than the CPU a start takes."""
    _RUNS[0] += 1
    done = f"__done_{_RUNS[0]}__"
    tmux("send-keys", "-t", session, "clear", "Enter")
    time.sleep(0.3)
    tmux("send-keys", "-t", session, "-l", f"{command}; clear; echo {done}")
    time.sleep(0.2)
    elapsed = _polled(session) if poll else _streamed(session)
    cpu = _cpu_of_app(session)
    if cpu is not None:
        CPU.append((command, cpu))
    _wait_for_screen(session)
    time.sleep(0.5)
    for key in quit_keys:
        tmux("send-keys", "-t", session, key)
    deadline = time.perf_counter() + 120  # quitting waits for background work to stop
    # the app has quit and restored the terminal when the shell prints the marker on its own line
    while not any(ln.strip() == done for ln in tmux("capture-pane", "-p", "-t", session).splitlines()):
        if time.perf_counter() > deadline:
            raise SystemExit(f"{command!r} did not quit")
        time.sleep(0.05)
    return elapsed


def _polled(session: str) -> float:
    """Press Enter; seconds until capture-pane shows the marker (polled every 2 ms)."""
    t0 = time.perf_counter()
    tmux("send-keys", "-t", session, "Enter")
    while True:
        screen = tmux("capture-pane", "-p", "-t", session)
        elapsed = time.perf_counter() - t0
        # the typed command line itself holds no "@@ -", so any hit is drawn by the app
        if MARK in screen:
            return elapsed
        if elapsed > TIMEOUT:
            raise SystemExit(f"no diff line after {TIMEOUT}s:\n{screen}")
        time.sleep(0.002)


_ESCAPES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
"""Terminal control sequences (CSI, charset, keypad, cursor save): styles may split the marker's characters."""


def _streamed(session: str) -> float:
    """Press Enter; seconds until the marker passes through the pane's output (tmux pipe-pane to a
    FIFO read here with a blocking select: the instrument uses no CPU while it waits)."""
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "pane")
        os.mkfifo(fifo)
        rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        wfd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ours: no EOF before tmux's writer opens it
        try:
            tmux("pipe-pane", "-O", "-t", session, f"exec cat > {shlex.quote(fifo)}")
            time.sleep(0.1)  # the pipe's shell started
            t0 = time.perf_counter()
            tmux("send-keys", "-t", session, "Enter")
            tail = b""
            while True:
                elapsed = time.perf_counter() - t0
                if elapsed > TIMEOUT:
                    raise SystemExit(f"no diff line written after {TIMEOUT}s")
                ready, _, _ = select.select([rfd], [], [], TIMEOUT - elapsed)
                if not ready:
                    continue
                elapsed = time.perf_counter() - t0
                tail += os.read(rfd, 1 << 16)
                # the typed command line itself holds no "@@ -", so any hit is written by the app
                if MARK.encode() in _ESCAPES.sub(b"", tail):
                    return elapsed
                tail = tail[-256:]  # a marker split across two reads is still found
        finally:
            tmux("pipe-pane", "-t", session)  # closes the pipe
            os.close(wfd)
            os.close(rfd)


def _wait_for_screen(session: str) -> None:
    """Wait (untimed) until the screen shows the marker: the written frame was drawn."""
    deadline = time.perf_counter() + TIMEOUT
    while MARK not in tmux("capture-pane", "-p", "-t", session):
        if time.perf_counter() > deadline:
            raise SystemExit("the marker was written but never shown")
        time.sleep(0.02)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--against", type=Path, help="another checkout whose reviewui is timed in the same rounds")
    ap.add_argument("--poll", action="store_true",
                    help="time until capture-pane (polled every 2 ms) shows the marker, as before session 28")
    args = ap.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("needs tmux")
    import compileall

    # As installed (pip writes bytecode at install time): with PYTHONDONTWRITEBYTECODE set, as on
    # this machine, an editable checkout would otherwise compile every module on every start,
    # while the bare app's Textual comes precompiled from site-packages.
    compileall.compile_dir(ROOT / "reviewui", quiet=1)
    if args.against is not None:
        compileall.compile_dir(args.against / "reviewui", quiet=1)
    with tempfile.TemporaryDirectory() as d:
        repo = big_branch(Path(d) / "big")
        base = subprocess.run(["git", "merge-base", "main", "agent/big"], cwd=repo, capture_output=True, text=True,
                              check=True).stdout.strip()
        env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_STATE_HOME": f"{d}/state", "XDG_CACHE_HOME": f"{d}/cache",
               "XDG_CONFIG_HOME": f"{d}/config"}
        session = f"reviewui-bench-{os.getpid()}"
        py = shlex.quote(sys.executable)
        ours_cmd = f"cd {shlex.quote(str(repo))} && {py} -m reviewui agent/big"
        bare_cmd = f"{py} {shlex.quote(str(ROOT / 'bench' / 'bare_diff_app.py'))} {shlex.quote(str(repo))} {base}..agent/big"
        other_cmd = (f"cd {shlex.quote(str(repo))} && PYTHONPATH={shlex.quote(str(args.against.resolve()))} "
                     f"{py} -m reviewui agent/big") if args.against is not None else None
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "200", "-y", "50", "bash --norc --noprofile"],
                       env=env, check=True)
        try:
            time.sleep(0.5)
            ours: list[float] = []
            bare: list[float] = []
            other: list[float] = []
            time_one(session, bare_cmd, ["C-q"], args.poll)  # warm the page cache for both; not counted
            time_one(session, ours_cmd, ["q"], args.poll)
            if other_cmd is not None:
                time_one(session, other_cmd, ["q"], args.poll)
            for _ in range(args.reps):
                bare.append(time_one(session, bare_cmd, ["C-q"], args.poll))
                ours.append(time_one(session, ours_cmd, ["q"], args.poll))
                if other_cmd is not None:
                    other.append(time_one(session, other_cmd, ["q"], args.poll))
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    mo, mb = statistics.median(ours), statistics.median(bare)
    how = "on screen, polled" if args.poll else "written to the pane"
    print(f"first paint in tmux, Enter to first diff line {how} (imports included), 400 files/40k lines:")
    print(f"  reviewui {mo:.3f}s  bare textual+git diff {mb:.3f}s  ratio {mo / mb:.2f}x"
          f"  (target <= 1.15x: {'met' if mo / mb <= 1.15 else 'NOT met'}; load {os.getloadavg()[0]:.1f})")
    print(f"  runs: reviewui {[round(x, 3) for x in ours]}  bare {[round(x, 3) for x in bare]}")
    if other:
        print(f"  against {args.against}: {statistics.median(other):.3f}s  ratio {statistics.median(other) / mb:.2f}x"
              f"  (this checkout / that one {mo / statistics.median(other):.2f}x; runs {[round(x, 3) for x in other]})")
    co = [c for cmd, c in CPU if cmd == ours_cmd][1:]  # the untimed warm-up runs left out
    cb = [c for cmd, c in CPU if cmd == bare_cmd][1:]
    if co and cb:
        print(f"  CPU to the first paint: reviewui {statistics.median(co):.3f}s  bare {statistics.median(cb):.3f}s"
              f"  ratio {statistics.median(co) / statistics.median(cb):.2f}x  (runs {co} / {cb})")


if __name__ == "__main__":
    main()
