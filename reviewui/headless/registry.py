"""The headless commands' registry: each handler registered by name, and how they print."""

from __future__ import annotations

import argparse
import sys
from typing import Callable

from reviewui.core.safe_text import json_visible, visible


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {}


def handler(name: str) -> Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]:
    """Register a function as the handler of subcommand `name`."""

    def register(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        HANDLERS[name] = fn
        return fn

    return register


def out(text: str, *, is_json: bool = False) -> None:
    """Print text (control, bidi and invisible characters made visible), ending with one newline."""
    # Whatever a renderer forgot, the terminal never gets raw; JSON keeps its meaning.
    text = json_visible(text) if is_json else visible(text, multiline=True)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


# --- verdicts -----------------------------------------------------------------
