"""What an expanded transcript turn shows beyond its text: edits as small diffs, wrapping, search text.

Kept apart from the view so the view stays about drawing and the cursor.
"""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from reviewui.core.transcript import Turn

EDIT_LINES = 40
"""Lines of one edit's diff shown before "… N more"."""


def edit_lines(edit: Any, limit: int = EDIT_LINES) -> list[tuple[str, str]]:
    """(style name, text) lines saying what one FileEdit changed: a header, then a small diff."""
    op, path = edit.operation, edit.path
    old, new = edit.old, edit.new
    out: list[tuple[str, str]] = [("detail", f"  ✎ {op} {path}")]
    if op in ("create", "write", "insert") and new is not None and not old:
        body = [("added", "    + " + ln) for ln in new.splitlines()]
    elif old is not None or new is not None:
        body = []
        diff = difflib.unified_diff((old or "").splitlines(), (new or "").splitlines(), lineterm="", n=1)
        for ln in list(diff)[2:]:  # the ---/+++ header lines say nothing here
            if ln.startswith("@@"):
                body.append(("muted", "    " + ln))
            elif ln.startswith("-"):
                body.append(("removed", "    - " + ln[1:]))
            elif ln.startswith("+"):
                body.append(("added", "    + " + ln[1:]))
            else:
                body.append(("muted", "      " + ln[1:]))
    else:
        body = [("muted", "    (the change itself is not in the transcript)")]
    if len(body) > limit:
        body = body[:limit] + [("muted", f"    … {len(body) - limit:,} more lines")]
    return out + body


def search_text(turn: Turn) -> str:
    """Everything `/` looks in for a turn, lower-cased: text, reasoning, tool names and inputs, edits."""
    parts = [turn.text, turn.reasoning]
    for c in turn.tool_calls:
        parts.append(c.name)
        args = c.arguments
        try:
            parts.append(args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))
        except (TypeError, ValueError):
            parts.append(str(args))
    for e in turn.edits:
        parts.extend(x for x in (e.path, e.old, e.new) if x)
    return "\n".join(p for p in parts if p).lower()


def wrap(text: str, width: int) -> list[str]:
    """`text` cut into rows of at most `width` cells at word boundaries; every row keeps its indent."""
    if width <= 0 or cell_len(text) <= width:
        return [text]
    indent = text[: len(text) - len(text.lstrip(" "))]
    if cell_len(indent) >= width // 2:
        indent = ""
    room = max(1, width - cell_len(indent))
    lines = Text(text[len(indent):]).wrap(_CONSOLE, room, overflow="fold", no_wrap=False)
    return [indent + line.plain.rstrip(" ") for line in lines] or [text]


_CONSOLE = Console(width=200, color_system=None, legacy_windows=False)
