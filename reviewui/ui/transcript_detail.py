"""A transcript turn as drawn: its one line, and when expanded its edits as small diffs; wrapping; search text.

Kept apart from the view so the view stays about drawing and the cursor.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, Callable

from rich.cells import cell_len
from rich.console import Console
from rich.style import Style
from rich.text import Text

from reviewui.core.safe_text import visible
from reviewui.ui.diff_rows import display_text

if TYPE_CHECKING:
    from reviewui.core.transcript import Turn

BAR = 12
"""Width of a turn's token bar."""
FLAG_TONE = {
    "truncated": "bad", "reasoning-only": "bad", "reasoning-resent": "warn", "writes-tests": "warn",
    "edits-existing-test": "bad", "edits-test-after-failure": "bad", "claims-done": "warn",
    "cache-miss": "warn", "prompt-changed": "warn", "tool-error": "info", "compaction": "info",
    "touch-declared": "info",
    # what a claim about the tests came to once reviewui checked it (the findings of the same names)
    "claim-contradicted": "bad", "claim-without-run": "warn", "claim-unverifiable": "info", "claim-confirmed": "good",
}
CLAIM_FLAGS: tuple[str, ...] = ("claim-contradicted", "claim-without-run", "claim-unverifiable", "claim-confirmed")
"""The claim flags, worst first: a turn's claims are drawn after its own flags, in this order."""
MAX_DETAIL_LINES = 400
"""Lines of a turn's text shown before "… N more lines"."""
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
    import json  # not at the top: loaded with the transcript, after the first paint

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


def turn_detail(t: Turn, show_reasoning: bool, links: Any) -> list[tuple[str, str]]:
    """(style name, text) lines shown under an expanded turn: reasoning, text, calls, edits, hunks, usage."""
    lines: list[tuple[str, str]] = []
    if t.note:  # what the loader knows that the text does not say (a reply cut off, an answer to a question)
        lines.append(("muted", "  note: " + visible(t.note)))
    if t.reasoning_chars:
        if show_reasoning:
            lines.append(("muted", f"reasoning ({t.reasoning_chars:,} chars; z hides it):"))
            # all of it: the reasoning is read nowhere else
            lines.extend(("muted", "  " + ln) for ln in t.reasoning.splitlines())
        else:
            lines.append(("muted", f"reasoning: {t.reasoning_chars:,} chars (z shows it)"))
    text_lines = t.text.splitlines()
    lines.extend(("detail", "  " + ln) for ln in text_lines[:MAX_DETAIL_LINES])
    if len(text_lines) > MAX_DETAIL_LINES:
        lines.append(("muted", f"  … {len(text_lines) - MAX_DETAIL_LINES:,} more lines"))
    for c in t.tool_calls:
        lines.append(("detail", f"  → {c.name} [{c.kind}] {' '.join(c.paths)}"))
        if c.kind == "shell" and isinstance(c.arguments, dict) and isinstance(c.arguments.get("command"), str):
            lines.extend(("muted", "    $ " + ln) for ln in c.arguments["command"].splitlines()[:20])
    for e in t.edits:
        lines.extend(edit_lines(e))
    if links is not None:
        produced = links.hunks_for(t.index)
        if produced:
            shown = ", ".join(f"{path} hunk {i + 1}" for path, i in produced[:8])
            more = f" (+{len(produced) - 8} more)" if len(produced) > 8 else ""
            lines.append(("muted", f"  wrote: {shown}{more}   (g shows the first)"))
    u = t.usage
    if u.input or u.output:
        lines.append(("muted", f"  usage: input {u.input:,} (cached {u.cached:,}) output {u.output:,}"
                               f" reasoning {u.reasoning:,}  stop={t.stop}"))
    return lines


def turn_header(t: Turn, style: Callable[[str], Style], max_input: int, narrow: bool,
                claims: tuple[str, ...] = ()) -> Text:
    """A turn's own line: index, role, token bar, flags (its own, then its `claims`), subagent mark and
    the first line of its text."""
    text = Text()
    text.append(f"#{t.index:<5}", style("muted"))
    role = {"command-output": "output", "answer": "answer"}.get(t.kind or "", t.role)  # Aider's /run output, y/n replies
    text.append(f"{visible(role):<9} ", style("role"))  # nine: "assistant", "developer"; then a gap
    if t.time and not narrow:  # when it was typed or written: the pace of the run (narrow: the text first)
        text.append(f"{visible(_clock(t.time)):<9}", style("muted"))
    if narrow:
        pass  # no token bar: at 80 columns it would leave the text a few characters
    elif t.usage.input or t.usage.output:
        filled = round(BAR * t.usage.input / max_input)
        text.append("█" * filled + "·" * (BAR - filled), style("bar"))
        text.append(f" {_k(t.usage.input):>6} in {_k(t.usage.output):>5} out ", style("muted"))
    else:
        text.append(" " * (BAR + 19))
    for flag in (*t.flags, *claims):
        text.append(f" {flag} ", style(f"flag-{FLAG_TONE.get(flag, 'info')}"))
        text.append(" ")
    first = display_text(t.text.strip().split("\n", 1)[0][:300]) if t.text.strip() else ""
    if not first and t.tool_calls:
        first = "→ " + visible(", ".join(c.name for c in t.tool_calls))
    elif not first and t.reasoning_chars:
        first = f"(reasoning only: {t.reasoning_chars:,} chars)"
    if t.group is not None:
        text.append(" ↳ subagent", style("muted"))  # a turn of the subagent a Task call started
    text.append(" " + first, style("header"))
    return text


def _k(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _clock(time: str) -> str:
    """The time of day of an ISO 8601 stamp, `YYYY-MM-DDTHH:MM:SS[.fff][Z|±hh:mm]` (the whole text when it is not one)."""
    day, clock = time[:10], time[11:]
    if len(time) < 19 or time[10] not in "T " or day[4:5] != "-":
        return time
    return clock[:8]
