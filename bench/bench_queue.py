"""The review queue of 200 agent branches with verdict notes: on screen from Enter, and a refresh.

A generated repository: a base of 50 files and 200 `agent/*` branches, each one
commit on the base; 120 of them carry a verdict note (80 approvals, 40 rejects),
a quarter of those on an earlier head (reworked or rebased since). Measured:
- `reviewui queue` in a real terminal (tmux, 200x50), wall clock from Enter
  until the last row's branch name is on screen, imports included (cold: the
  queue's cache emptied first; warm: the second run, as a reviewer reopening it);
- `reviewui queue --format json` headless, cold and warm;
- a refresh after one branch moved (in-process: `QueueSource.rows()` after a commit).
Targets (issue 30): on screen <= 1 s, refresh <= 0.3 s.
Run: python bench/bench_queue.py [--reps N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BRANCHES = 200
ENV = {"GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.com", "GIT_COMMITTER_NAME": "Agent",
       "GIT_COMMITTER_EMAIL": "agent@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, env={**os.environ, **ENV}, input=input, capture_output=True,
                          check=True).stdout.decode().strip()


def make_repo(root: Path) -> Path:
    """The generated repository (built with fast-import: 200 branches in a second)."""
    repo = root / "fleet"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    stream = []
    mark = 1
    files = {f"src/mod{n}.py": f"def f{n}(x):\n    return x + {n}\n" for n in range(50)}
    stream.append("commit refs/heads/main\nmark :1\ncommitter Agent <agent@example.com> 1700000000 +0000\n"
                  "data 4\nbase\n")
    for path, text in files.items():
        stream.append(f"M 100644 inline {path}\ndata {len(text)}\n{text}\n")
    for b in range(BRANCHES):
        mark += 1
        text = f"def f{b % 50}(x):\n    return x * {b}\n"
        stream.append(f"commit refs/heads/agent/task-{b:03d}\nmark :{mark}\n"
                      f"committer Agent <agent@example.com> {1700000000 + 60 * b} +0000\n"
                      f"data 16\nagent: task {b:03d}\nfrom :1\nM 100644 inline src/mod{b % 50}.py\n"
                      f"data {len(text)}\n{text}\n")
    git(repo, "fast-import", "--quiet", input="".join(stream).encode())
    git(repo, "checkout", "-q", "main")
    return repo


def add_verdicts(repo: Path, env: dict[str, str]) -> None:
    """120 verdict notes through reviewui itself (so they are real reviews)."""
    for b in range(120):
        word = "approve" if b < 80 else "reject"
        subprocess.run([sys.executable, "-m", "reviewui", "verdict", f"agent/task-{b:03d}", word, "--reason", "bench"],
                       cwd=repo, env=env, capture_output=True, check=True)
    for b in range(0, 120, 4):  # a quarter moved on since their verdict
        git(repo, "checkout", "-q", f"agent/task-{b:03d}")
        Path(repo, "src", f"mod{b % 50}.py").write_text(f"def f{b % 50}(x):\n    return x * {b} + 1\n")
        git(repo, "commit", "-qam", "rework")
    git(repo, "checkout", "-q", "main")


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def on_screen(session: str, repo: Path, env_prefix: str, mark: str) -> float:
    tmux("send-keys", "-t", session, "clear", "Enter")
    time.sleep(0.3)
    tmux("send-keys", "-t", session, "-l", f"cd {repo} && {env_prefix} {sys.executable} -m reviewui queue")
    time.sleep(0.2)
    t0 = time.perf_counter()
    tmux("send-keys", "-t", session, "Enter")
    while mark not in tmux("capture-pane", "-p", "-t", session):
        if time.perf_counter() - t0 > 30:
            raise SystemExit("the queue did not show within 30 s")
        time.sleep(0.005)
    elapsed = time.perf_counter() - t0
    tmux("send-keys", "-t", session, "q")
    time.sleep(0.8)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-queue-"))
    state = root / "xdg"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_STATE_HOME": str(state / "state"),
           "XDG_CACHE_HOME": str(state / "cache"), "XDG_CONFIG_HOME": str(state / "config")}
    repo = make_repo(root)
    add_verdicts(repo, env)
    env_prefix = " ".join(f"{k}={v}" for k, v in env.items() if k.startswith("XDG_") or k == "PYTHONPATH")
    cache = state / "cache" / "reviewui" / "queue"

    def headless() -> float:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "reviewui", "queue", "--format", "json"], cwd=repo, env=env,
                       capture_output=True, check=True)
        return time.perf_counter() - t0

    cold, warm = [], []
    for _ in range(args.reps):
        shutil.rmtree(cache, ignore_errors=True)
        cold.append(headless())
        warm.append(headless())
    print(f"headless queue --format json, {BRANCHES} branches: cold median {statistics.median(cold):.2f}s, "
          f"warm median {statistics.median(warm):.2f}s")

    os.environ.update({k: v for k, v in env.items() if k.startswith("XDG_")})
    from reviewui.core.queue.read import QueueSource

    source = QueueSource(repo, "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", ())
    source.rows()
    refresh = []
    for n in range(args.reps):
        git(repo, "checkout", "-q", "agent/task-150")
        Path(repo, "src", "mod0.py").write_text(f"# moved {n}\n")
        git(repo, "commit", "-qam", f"move {n}")
        git(repo, "checkout", "-q", "main")
        t0 = time.perf_counter()
        source.rows()
        refresh.append(time.perf_counter() - t0)
    print(f"refresh after one branch moved: median {statistics.median(refresh):.3f}s (target <= 0.3 s)")

    if shutil.which("tmux") is None:
        print("tmux not installed: the on-screen figure needs it (apt-get install tmux)")
        return
    session = f"bench-queue-{os.getpid()}"
    tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "50")
    try:
        screen_cold, screen_warm = [], []
        for _ in range(args.reps):
            shutil.rmtree(cache, ignore_errors=True)
            screen_cold.append(on_screen(session, repo, env_prefix, "branches · sort"))
            screen_warm.append(on_screen(session, repo, env_prefix, "branches · sort"))
        print(f"on screen from Enter (200x50): cold median {statistics.median(screen_cold):.2f}s, "
              f"warm median {statistics.median(screen_warm):.2f}s (target <= 1 s)")
    finally:
        tmux("kill-session", "-t", session)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
