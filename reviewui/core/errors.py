"""The one error type a user can cause.

The CLI turns a ReviewError into a single line on stderr and its `exit_code`
(2: usage or input; 3: the environment cannot give a run its clean room);
anything else escaping is a bug and keeps its traceback.
"""

from __future__ import annotations

from typing import Any, Sequence


class ReviewError(Exception):
    """A problem the user can fix: not a repo, unknown branch, malformed input."""

    exit_code = 2
    """The exit code the CLI returns for it."""


class SandboxError(ReviewError):
    """The sandbox, or one of its limits, cannot be set up here: nothing could be learned (exit 3)."""

    exit_code = 3


def refusal(reason: str, tests: Sequence[str] = ()) -> dict[str, Any]:
    """The one JSON object a `--format json` command prints, on stdout, when it refuses (exit 3):
    `{"refused": {"reason": ..., "tests": [...]}}` (a command that still has a document to print
    puts the `refused` key in it)."""
    return {"refused": {"reason": reason, "tests": list(tests)}}
