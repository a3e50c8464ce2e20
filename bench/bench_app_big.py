"""The app with the big diff and a big transcript open: transcript first screen, jump to last turn, peak memory.

Targets (issue 9): the transcript's first screen within 1 s of asking for it,
jumping to the last turn under 100 ms, and peak memory with the 400-file
diff and the 100 MB transcript open at most 300 MB. The transcript is
generated deterministically (bench/bench_transcript.py) and loaded in the
app's worker, as a reviewer would see it.
Run: python bench/bench_app_big.py [--mb 100] [--reps 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_transcript import generate  # noqa: E402
from bench.genrepo import big_branch  # noqa: E402

SIZE = (160, 48)


async def one_run(repo: Path, transcript: Path) -> tuple[float, float]:
    from reviewui.core.session import ReviewSession
    from reviewui.ui.app import make_app
    from reviewui.ui.widgets.transcript_view import TranscriptView

    session = ReviewSession.open(repo, "agent/big", transcript=transcript)
    app = make_app(session)
    async with app.run_test(size=SIZE):
        t0 = time.perf_counter()
        # The reviewer asks for the transcript at once. (Not pilot.press: it waits
        # until the process is idle, which includes the background workers.)
        await app.screen.run_action("toggle_transcript")
        view = app.screen.query_one(TranscriptView)
        while view.transcript is None:
            await asyncio.sleep(0.005)
        for y in range(view.size.height):
            view.render_line(y)
        first_screen = time.perf_counter() - t0
        await app.workers.wait_for_complete()
        k0 = time.perf_counter()
        view.action_cursor_end()
        for y in range(view.size.height):
            view.render_line(y)
        jump = time.perf_counter() - k0
    return first_screen, jump


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--one", nargs=2, metavar=("REPO", "TRANSCRIPT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        # One measured run in a fresh process, so peak memory is this run's alone.
        f, j = asyncio.run(one_run(Path(args.one[0]), Path(args.one[1])))
        print(json.dumps({"first": f, "jump": j, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
        return
    with tempfile.TemporaryDirectory() as d:
        repo = big_branch(Path(d) / "big")
        transcript = Path(d) / "session.jsonl"
        generate(transcript, int(args.mb * 1024 * 1024))
        runs = []
        for _ in range(args.reps):
            out = subprocess.run([sys.executable, __file__, "--one", str(repo), str(transcript)],
                                 capture_output=True, text=True, check=True).stdout
            runs.append(json.loads(out.strip().splitlines()[-1]))
        mf = statistics.median(r["first"] for r in runs)
        mj = statistics.median(r["jump"] for r in runs) * 1000
        peak_mb = max(r["peak_mb"] for r in runs)
        print(f"transcript first screen after 't' ({args.mb:.0f} MB): {mf:.2f}s  (target <= 1 s: {'met' if mf <= 1 else 'NOT met'})")
        print(f"jump to last turn: {mj:.1f} ms  (target <= 100 ms: {'met' if mj <= 100 else 'NOT met'})")
        print(f"peak RSS with the 400-file diff and the transcript open: {peak_mb:.0f} MB"
              f"  (target <= 300 MB: {'met' if peak_mb <= 300 else 'NOT met'})")


if __name__ == "__main__":
    main()
