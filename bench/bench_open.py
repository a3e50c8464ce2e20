"""Open a 400-file / 40k-line branch to the first rendered screen, headless; and the next-hunk key.

Compares reviewui with a bare Textual app that runs `git diff` and shows
its first screen (bench/bare_diff_app.py). Prints medians and the ratio.
Targets: first screen <= 0.5 s and <= 1.5x the floor; next-hunk <= 16 ms median.
Run: python bench/bench_open.py [--reps N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bare_diff_app import BareDiff  # noqa: E402
from bench.genrepo import big_branch  # noqa: E402

SIZE = (160, 48)


async def open_reviewui(repo: Path) -> tuple[float, list[float]]:
    from reviewui.core.session import ReviewSession
    from reviewui.ui.app import make_app

    t0 = time.perf_counter()
    session = ReviewSession.open(repo, "agent/big")
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        # The review screen notes the time of its first paint (from a call_after_refresh
        # callback, as the floor's is taken) before it starts the background work.
        while getattr(app.screen, "first_paint_at", None) is None:
            await asyncio.sleep(0.002)
        first = app.screen.first_paint_at - t0
        await app.workers.wait_for_complete()
        keys: list[float] = []
        screen = app.screen
        view = screen.diff_view
        await pilot.pause()
        for _ in range(40):
            # The key's own cost: the action plus drawing every visible row of the new position
            # (pilot.press adds fixed idle waits of its own, so it is not timed here).
            k0 = time.perf_counter()
            screen.action_next_hunk()
            for y in range(view.size.height):
                view.render_line(y)
            keys.append(time.perf_counter() - k0)
            await pilot.pause()
    return first, keys


async def open_bare(repo: Path) -> float:
    t0 = time.perf_counter()
    app = BareDiff(str(repo), "main..agent/big")
    async with app.run_test(size=SIZE):
        while app.first_paint_at is None:
            await asyncio.sleep(0.002)
        return app.first_paint_at - t0


def one(which: str, repo: Path) -> None:
    """One measured open in this (fresh) process; imports are done before the clock starts."""
    import reviewui.ui.app  # noqa: F401

    if which == "bare":
        print(json.dumps({"first": asyncio.run(open_bare(repo)), "keys": []}))
    else:
        first, keys = asyncio.run(open_reviewui(repo))
        print(json.dumps({"first": first, "keys": keys}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--one", nargs=2, metavar=("WHICH", "REPO"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(args.one[0], Path(args.one[1]))
        return
    with tempfile.TemporaryDirectory() as d:
        repo = big_branch(Path(d) / "big")
        ours: list[float] = []
        bare: list[float] = []
        keys: list[float] = []
        # Each open in a fresh process, as a reviewer starts it: garbage left by an
        # earlier run in the same process makes the next one's timing meaningless.
        for _ in range(args.reps):
            for which, into in (("bare", bare), ("ours", ours)):
                out = subprocess.run([sys.executable, __file__, "--one", which, str(repo)],
                                     capture_output=True, text=True, check=True).stdout
                data = json.loads(out.strip().splitlines()[-1])
                into.append(data["first"])
                keys.extend(data["keys"])
        mo, mb = statistics.median(ours), statistics.median(bare)
        mk = statistics.median(keys) * 1000
        print(f"open 400 files/40k lines: reviewui {mo:.3f}s  bare textual+git diff {mb:.3f}s  ratio {mo / mb:.2f}x"
              f"  (target <= 0.5 s and <= 1.5x: {'met' if mo <= 0.5 and mo / mb <= 1.5 else 'NOT met'})")
        print(f"next-hunk key (action + draw visible rows): median {mk:.1f} ms  (target <= 16 ms: {'met' if mk <= 16 else 'NOT met'})")


if __name__ == "__main__":
    main()
