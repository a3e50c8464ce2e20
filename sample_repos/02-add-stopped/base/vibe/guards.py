"""Checks every prompt passes before it leaves the machine."""

from __future__ import annotations

import re


def has_github_token(text: str) -> bool:
    """Return True when `text` holds something shaped like a GitHub token."""
    pattern = re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36}\b")
    return pattern.search(text) is not None


def check_prompt(prompt: str) -> None:
    """Raise ValueError when `prompt` must not be sent to a model."""
    if has_github_token(prompt):
        raise ValueError("prompt contains a GitHub token")
