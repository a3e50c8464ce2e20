"""Run benchmark tasks through the harness and print one JSON row per run.

Usage: python -m scripts.bench TASK [TASK ...]
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Callable

from vibe.runner import RunResult, run_task

Runner = Callable[..., RunResult]


def run(task: str, *, max_steps: int = 20, runner: Runner = run_task) -> dict[str, object]:
    """Run `task` once and return the row the results table is built from."""
    started = time.monotonic()
    result = runner(task, max_steps=max_steps)
    return {
        "task": task,
        "steps": result.steps,
        "done": result.done,
        "changed": list(result.changed_files),
        "summary": result.summary,
        "seconds": round(time.monotonic() - started, 3),
    }


def reject_github_tokens_in_prompt(prompt: str) -> bool:
    token_re = re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36}\b")
    return token_re.search(prompt) is not None


def main(argv: list[str]) -> int:
    """Run every task named on the command line; return the exit status."""
    if not argv:
        print("usage: python -m scripts.bench TASK [TASK ...]", file=sys.stderr)
        return 2
    for task in argv:
        print(json.dumps(run(task)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
