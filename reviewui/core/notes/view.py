"""Foreign text in notes: what a note holds that is no review anyone signed or wrote as one.

Everything in the notes of a branch that is not a review is shown apart from
the reviews, with the reason it is foreign: text no review table holds, text
after a review's signature (which no signature covers), or a second copy of a
review (same id) that says something else than the one shown. Which reviews
there are, and what they mean, is the verdict relation's (relation.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ForeignText:
    """Text in a note that is not a review anyone signed or wrote as one."""

    commit: str
    """The commit whose note holds it."""
    text: str
    """The text, exactly as stored."""
    why: str
    """Where or why, in words: `after review 1b2c3d4e`, `before any review`, `another copy of review … that differs`."""


def foreign_why(after: str) -> str:
    """Where foreign text sits: after the review with id `after`, or before any review ("")."""
    return f"after review {after[:8]}" if after else "before any review"
