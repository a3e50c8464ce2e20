"""The review queue of 10 000 agent branches with verdict notes: headless, on screen from Enter, a refresh.

A generated repository: a base of 50 files and 10 000 `agent/*` branches, each one
commit on the base; 1 000 of them carry a verdict note recorded here (600 approvals,
400 rejects; reviewui's own TOML, with their provenance kept as `reviewui verdict`
keeps it), a quarter of those on an earlier head (reworked since), and 2 000 have a
stored sweep summary under their key. Measured (issue 38/44 targets):
- `reviewui queue --format json` headless: cold (the queue's cache emptied: the
  first read ever) <= 5 s, warm (the second read) <= 2 s;
- the app's first screen: in a headless driver, until its first rows are painted
  (a warm start paints the last read's rows at once, marked as of then, while the
  fresh read runs: core/queue/snapshot.py) and until the fresh read is, and in a
  real terminal (tmux, 200x50) from Enter until the title is on screen: warm <= 1 s;
- a refresh after one branch moved (in-process: `QueueSource.read()` after a commit).
Each figure is printed with its ratio to the target, as wall clock and as CPU time
(on a shared, loaded machine the wall clock mostly measures the others' load). Run: python bench/bench_queue.py [--reps N] [--branches N]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ENV = {"GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.com", "GIT_COMMITTER_NAME": "Agent",
       "GIT_COMMITTER_EMAIL": "agent@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
REVIEWED = 1000
SWEPT = 2000


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, env={**os.environ, **ENV}, input=input, capture_output=True,
                          check=True).stdout.decode().strip()


def make_repo(root: Path, branches: int) -> Path:
    """The generated repository (fast-import: 10 000 branches in a few seconds)."""
    repo = root / "fleet"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Reviewer")
    git(repo, "config", "user.email", "reviewer@example.com")
    stream = ["commit refs/heads/main\nmark :1\ncommitter Agent <agent@example.com> 1700000000 +0000\ndata 4\nbase\n"]
    for n in range(50):
        text = f"def f{n}(x):\n    return x + {n}\n"
        stream.append(f"M 100644 inline src/mod{n}.py\ndata {len(text)}\n{text}\n")
    for b in range(branches):
        text = f"def f{b % 50}(x):\n    return x * {b}\n"
        stream.append(f"commit refs/heads/agent/task-{b:05d}\nmark :{b + 2}\n"
                      f"committer Agent <agent@example.com> {1700000000 + 60 * b} +0000\n"
                      f"data 18\nagent: task {b:05d}\n\nfrom :1\nM 100644 inline src/mod{b % 50}.py\n"
                      f"data {len(text)}\n{text}\n")
    git(repo, "fast-import", "--quiet", input="".join(stream).encode())
    git(repo, "checkout", "-q", "main")
    return repo


def add_verdicts(repo: Path, branches: int) -> None:
    """REVIEWED verdict notes in reviewui's own format, written in one fast-import; a quarter reworked since."""
    import uuid
    from datetime import datetime, timezone

    from reviewui.core.notes import provenance
    from reviewui.core.notes.model import TOOL, Review
    from reviewui.core.notes.patchid import patch_ids

    base = git(repo, "rev-parse", "main")
    heads = dict(line.split() for line in git(repo, "for-each-ref", "--format=%(refname:short) %(objectname)",
                                              "refs/heads/agent/").splitlines())
    names = [f"agent/task-{b:05d}" for b in range(0, branches, max(1, branches // REVIEWED))][:REVIEWED]
    ids = patch_ids(repo, [(base, heads[n]) for n in names])
    trees = git(repo, "rev-parse", *[f"{heads[n]}^{{tree}}" for n in names]).split()
    reviews = []
    stream = ["commit refs/notes/reviewui\ncommitter R <r@x> 1700000000 +0000\ndata 6\nnotes\n"]
    now = datetime.now(timezone.utc).replace(microsecond=0)
    for n, (name, tree) in enumerate(zip(names, trees, strict=True)):
        r = Review(str(uuid.uuid4()), "approve" if n % 5 < 3 else "reject", "bench", "Reviewer <reviewer@example.com>",
                   now, TOOL, name, base, heads[name], tree, ids[(base, heads[name])])
        reviews.append(r)
        body = r.to_toml()
        stream.append(f"N inline {heads[name]}\ndata {len(body.encode())}\n{body}\n")
    git(repo, "fast-import", "--quiet", input="".join(stream).encode())
    provenance.remember(repo, reviews, provenance.RECORDED)
    rework = []
    for n, r in enumerate(reviews[::4]):
        text = f"def f0(x):\n    return x - {n}\n"
        rework.append(f"commit refs/heads/{r.branch}\ncommitter Agent <agent@example.com> 1800000000 +0000\n"
                      f"data 7\nrework\nfrom {r.head}\nM 100644 inline src/rework.py\ndata {len(text)}\n{text}\n")
    git(repo, "fast-import", "--quiet", "--force", input="".join(rework).encode())


def add_sweeps(repo: Path) -> None:
    """SWEPT stored sweep summaries, each under the key the queue expects for its branch now."""
    from reviewui.core.queue.evidence import Wanted, expected_keys, settings_of_base
    from reviewui.core.queue.read import read_queue
    from reviewui.core.store import EvidenceStore
    from reviewui.core.store.summary import KIND, SweepSummary

    records, _ = read_queue(repo, "main")
    wanted = [Wanted(r.branch, r.head, r.base) for r in records[:SWEPT]]
    store = EvidenceStore.open()
    for n, key in enumerate(expected_keys(str(repo), wanted, settings_of_base(repo, lambda _: {},
                                                                               lambda *_, **__: None))):
        store.save(key, KIND, SweepSummary("green", bites=3, total=4, toothless=n % 3, findings={"warning": 1}))


FIRST = """
import asyncio, time
t0, c0 = time.perf_counter(), time.process_time()
from pathlib import Path
from reviewui.core.queue.read import QueueSource
from reviewui.ui.queue_app import QueueApp
async def main():
    app = QueueApp(QueueSource(Path({repo!r}), "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", ()),
                   sweep=False)
    async with app.run_test(size=(200, 50)) as pilot:
        q = app.screen
        while not q.rows:
            await asyncio.sleep(0.005)
        await pilot.pause()
        first = (time.perf_counter() - t0, time.process_time() - c0)
        await q.loaded.wait()
        await pilot.pause()
        print(*first, time.perf_counter() - t0, time.process_time() - c0)
asyncio.run(main())
"""


def first_screen(repo: Path, env: dict[str, str], reps: int) -> None:
    """The app in a headless driver, imports included: until its first rows are painted (the last start's,
    snapshot.py), and until the fresh read is; wall and the process's own CPU (git's is not in it)."""
    runs = []
    for _ in range(reps):
        out = subprocess.run([sys.executable, "-c", FIRST.format(repo=str(repo))], env=env, capture_output=True,
                             text=True, check=True).stdout.split()
        runs.append([float(x) for x in out])
    med = [statistics.median(r[i] for r in runs) for i in range(4)]
    print(f"app, first rows painted: wall {med[0]:.2f}s ({med[0]:.2f}x the 1 s target), CPU {med[1]:.2f}s; "
          f"the fresh read painted: wall {med[2]:.2f}s, CPU {med[3]:.2f}s; load average {os.getloadavg()[0]:.1f}")


def profile_reads(repo: Path, cache: Path) -> None:
    """A cold and a warm read in this process under cProfile: the reviewui functions that took longest."""
    import cProfile
    import io
    import pstats

    from reviewui.core.notes.index import forget_parsed
    from reviewui.core.queue.read import QueueSource
    from reviewui.core.queue.report import render_json_text

    source = QueueSource(repo, "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", ())
    for name in ("cold", "warm"):
        if name == "cold":
            shutil.rmtree(cache, ignore_errors=True)
            forget_parsed()
        profile = cProfile.Profile()
        profile.enable()
        view = source.read()
        render_json_text(view.rows, view.omitted)
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(r"reviewui/(core|ui)/", 15)
        print(f"--- {name} read, profiled (times inflated by the profiler)")
        print("\n".join(line for line in out.getvalue().splitlines() if "reviewui/" in line or "ncalls" in line))


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def on_screen(session: str, repo: Path, env_prefix: str, mark: str, command: str = "") -> float:
    tmux("send-keys", "-t", session, "clear", "Enter")
    time.sleep(0.3)
    command = command or f"{sys.executable} -m reviewui queue"
    tmux("send-keys", "-t", session, "-l", f"cd {repo} && {env_prefix} {command}")
    time.sleep(0.2)
    t0 = time.perf_counter()
    tmux("send-keys", "-t", session, "Enter")
    while mark not in tmux("capture-pane", "-p", "-t", session):
        if time.perf_counter() - t0 > 60:
            raise SystemExit("the queue did not show within 60 s")
        time.sleep(0.005)
    elapsed = time.perf_counter() - t0
    tmux("send-keys", "-t", session, "q")
    # the next start waits for this one's end (its read and sweep threads too): no overlap, and no keys of the
    # next command typed into an app still closing
    while tmux("display-message", "-p", "-t", session, "#{pane_current_command}").strip() not in ("bash", "sh", "zsh"):
        if time.perf_counter() - t0 > 120:
            raise SystemExit("the queue did not quit within 120 s")
        time.sleep(0.05)
    time.sleep(0.3)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--branches", type=int, default=10_000)
    parser.add_argument("--profile", action="store_true", help="also profile a cold and a warm read (cProfile)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-queue-"))
    state = root / "xdg"
    # as installed: bytecode written and read (with PYTHONDONTWRITEBYTECODE every start compiles the modules it
    # imports, ~0.2-0.4 s CPU here)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_STATE_HOME": str(state / "state"),
           "XDG_CACHE_HOME": str(state / "cache"), "XDG_CONFIG_HOME": str(state / "config")}
    os.environ.update({k: v for k, v in env.items() if k.startswith("XDG_")})
    t0 = time.perf_counter()
    repo = make_repo(root, args.branches)
    add_verdicts(repo, args.branches)
    add_sweeps(repo)
    print(f"made {args.branches} branches, {REVIEWED} verdicts, {SWEPT} stored sweeps in "
          f"{time.perf_counter() - t0:.1f}s; load average {os.getloadavg()[0]:.1f}")
    env_prefix = " ".join(f"{k}={v}" for k, v in env.items() if k.startswith("XDG_") or k == "PYTHONPATH")
    cache = state / "cache" / "reviewui" / "queue"

    def headless() -> tuple[float, float]:
        """(wall seconds, CPU seconds of the process and the git processes it ran)."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "reviewui", "queue", "--format", "json"], cwd=repo, env=env,
                       capture_output=True, check=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    try:
        cold, warm = [], []
        for _ in range(args.reps):
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(headless())
            warm.append(headless())
        for name, runs, target in (("cold", cold, 5.0), ("warm", warm, 2.0)):
            w, c = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
            print(f"headless queue --format json, {args.branches} branches, {name}: wall {w:.2f}s "
                  f"({w / target:.2f}x the {target:.0f} s target), CPU {c:.2f}s ({c / target:.2f}x); "
                  f"load average {os.getloadavg()[0]:.1f}")
        first_screen(repo, env, args.reps)
        if args.profile:
            profile_reads(repo, cache)

        from reviewui.core.queue.read import QueueSource

        source = QueueSource(repo, "main", ("refs/heads/agent/*",), False, "refs/notes/reviewui", ())
        source.read()
        refresh = []
        for n in range(args.reps):
            git(repo, "checkout", "-q", "agent/task-00150")
            Path(repo, "src", "mod0.py").write_text(f"# moved {n}\n")
            git(repo, "commit", "-qam", f"move {n}")
            git(repo, "checkout", "-q", "main")
            t0 = time.perf_counter()
            source.read()
            refresh.append(time.perf_counter() - t0)
        r = statistics.median(refresh)
        print(f"refresh after one branch moved (in-process): median {r:.3f}s")

        if shutil.which("tmux") is None:
            print("tmux not installed: the on-screen figure needs it (apt-get install tmux)")
            return
        session = f"bench-queue-{os.getpid()}"
        tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "50")
        try:
            screen_cold, screen_warm, bare = [], [], []
            mark = f"review queue: {args.branches} branches"
            bare_cmd = f"{sys.executable} {ROOT / 'bench' / 'bare_queue_app.py'} {repo}"
            for _ in range(args.reps):  # interleaved: the load moves while they run
                shutil.rmtree(cache, ignore_errors=True)
                screen_cold.append(on_screen(session, repo, env_prefix, mark))
                screen_warm.append(on_screen(session, repo, env_prefix, mark))
                bare.append(on_screen(session, repo, env_prefix, mark, bare_cmd))
            sc, sw, sb = statistics.median(screen_cold), statistics.median(screen_warm), statistics.median(bare)
            print(f"on screen from Enter (200x50): cold median {sc:.2f}s, warm median {sw:.2f}s "
                  f"({sw / 1:.2f}x the 1 s target); a bare Textual app listing the branches {sb:.2f}s "
                  f"(warm {sw / sb:.2f}x it); load average {os.getloadavg()[0]:.1f}")
        finally:
            tmux("kill-session", "-t", session)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
