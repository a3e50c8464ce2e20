"""A review of demo story 03 whose transcript says "All tests pass." with no test run behind it."""

from __future__ import annotations

import json
from pathlib import Path

from reviewui.core.session import ReviewSession
from reviewui.demo import build_sample


def claim_without_run(tmp_path: Path) -> ReviewSession:
    """Story 03 with a four-turn transcript whose last turn claims green without a run (turn 4)."""
    built = build_sample("03-null-guard", tmp_path)
    transcript = tmp_path / "no-run.json"
    transcript.write_text(json.dumps({"messages": [
        {"role": "user", "content": "Add a null guard to write_ledger."},
        {"role": "assistant", "content": "Looking at the writer."},
        {"role": "user", "content": "go on"},
        {"role": "assistant", "content": "I added the guard. All tests pass."}]}))
    return ReviewSession.open(built.repo_dir, "agent/null-guard", transcript=transcript)
