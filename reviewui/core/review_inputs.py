"""Where a review's task and transcript come from when the reviewer does not name them."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.bounded import read_input_text
from reviewui.core.config import Settings
from reviewui.core.target import Target

TASK_FILE = ".reviewui/task.md"


def default_task(target: Target) -> str | None:
    """The task in `.reviewui/task.md`: the base commit's, else the reviewer's untracked file; never the branch's.

    A task the branch wrote, rewrote or deleted would let the agent say what it was asked to do.
    """
    from reviewui.core.git import show_files

    at_base, at_head = show_files(target.repo_dir, [(target.base, TASK_FILE), (target.head, TASK_FILE)])
    if at_base is not None:
        return at_base.decode("utf-8", "replace")  # committed before the agent's work: what it was asked
    if at_head is not None:
        return None  # the branch adds it: agent-authored
    path = target.repo_dir / TASK_FILE
    return read_input_text(path, "task file") if path.is_file() else None


def find_transcript(repo_dir: Path, settings: Settings) -> Path | None:
    """The first of the configured transcript paths that is a file in the working tree, else None."""
    for rel in settings.transcript_paths:
        p = repo_dir / rel
        if p.is_file():
            return p
    return None
