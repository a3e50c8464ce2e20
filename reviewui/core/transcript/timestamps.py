"""Timestamps as the transcripts write them, made ISO 8601.

Agents record time as ISO strings (Claude Code, Codex, Gemini CLI, Copilot
CLI), epoch seconds (mini-swe-agent) or epoch milliseconds (Cline, OpenCode);
the JSON contract carries one spelling.
"""

from __future__ import annotations

from typing import Any

_MS_THRESHOLD = 100_000_000_000  # past this an epoch number is milliseconds (seconds reach it in the year 5138)


def iso_time(v: Any) -> str | None:
    """`v` as an ISO 8601 string: an ISO string as given, an epoch number (seconds or ms) in UTC; None otherwise."""
    if isinstance(v, str):
        s = v.strip()
        return s if len(s) >= 10 and s[:4].isdigit() and s[4] == "-" else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
        return None
    from datetime import datetime, timezone  # only epoch numbers need it: not imported by every load

    seconds = v / 1000 if v >= _MS_THRESHOLD else float(v)
    try:
        t = datetime.fromtimestamp(seconds, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")
