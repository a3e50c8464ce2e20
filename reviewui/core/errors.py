"""The one error type a user can cause.

The CLI turns a ReviewError into a single line on stderr and exit code 2;
anything else escaping is a bug and keeps its traceback.
"""

from __future__ import annotations


class ReviewError(Exception):
    """A problem the user can fix: not a repo, unknown branch, malformed input."""
