"""Run one task through the agent and report what happened."""

from __future__ import annotations

from dataclasses import dataclass

from vibe.guards import check_prompt


@dataclass(frozen=True)
class RunResult:
    """What one run of the agent did."""

    steps: int
    done: bool
    stopped: str
    """Why the run ended: "done", "budget" or "refused"."""
    changed_files: tuple[str, ...] = ()
    summary: str = ""


def run_task(task: str, *, max_steps: int = 20) -> RunResult:
    """Run `task` and return its result.

    This stand-in agent finishes in one step without changing anything; the
    benchmark swaps in the real model loop. Raises ValueError for a prompt
    the guards refuse.
    """
    check_prompt(task)
    if max_steps < 1:
        return RunResult(steps=0, done=False, stopped="budget")
    return RunResult(steps=1, done=True, stopped="done", summary=f"echo: {task}")
