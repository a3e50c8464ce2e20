"""From parsed command-line arguments to a ReviewSession, and JSON out: shared by every command.

Lives below both `cli.py` (the parser and dispatch) and `headless/` (the
headless twins) so neither imports the other's internals.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from reviewui.core.safe_text import json_visible

if TYPE_CHECKING:  # imported where used: `transcript FILE` needs no session, and starts faster without one
    from reviewui.core.session import ReviewSession, RunOptions


def run_options_from_args(args: argparse.Namespace) -> RunOptions:
    """The run options (test command, selection, jobs, timeout) given on the command line."""
    from reviewui.core.session import RunOptions

    return RunOptions(
        test_cmd=getattr(args, "test_cmd", None),
        all_tests=getattr(args, "all_tests", False),
        jobs=getattr(args, "jobs", None),
        timeout=getattr(args, "timeout", None),
        fresh=getattr(args, "fresh", False),
        engine=getattr(args, "engine", None),
        ray_address=getattr(args, "ray_address", None),
    )


def session_from_args(args: argparse.Namespace, branch: str | None = None) -> ReviewSession:
    """Open the review session the command line names (repo, branch, base, transcript, task)."""
    from reviewui.core.session import ReviewSession

    return ReviewSession.open(
        getattr(args, "repo", None),
        branch if branch is not None else getattr(args, "branch", None),
        getattr(args, "base", None),
        transcript=getattr(args, "transcript", None),
        transcript_format=getattr(args, "transcript_format", None),
        transcript_instance=getattr(args, "instance", None),
        task=getattr(args, "task", None),
        task_file=getattr(args, "task_file", None),
        run=run_options_from_args(args),
        trust_branch_config=getattr(args, "trust_branch_config", False),
    )


def emit(data: Any) -> None:
    """Print JSON to stdout (UTF-8, stable key order as built)."""
    import json  # not at the top: `open` writes no JSON

    sys.stdout.write(json_visible(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")
