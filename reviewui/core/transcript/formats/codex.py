"""OpenAI Codex CLI: rollout JSONL (`~/.codex/sessions/…/rollout-*.jsonl`) and `codex exec --json` streams."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import CODEX_EXEC_EVENTS, Sniff, is_codex_line
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions, keyed
from reviewui.core.transcript.source import LineCounter


def _exec_stream(s: Sniff) -> bool:
    return any(o.get("type") == "thread.started" or str(o.get("type", "")).startswith("item.") for o in s.objects) and all(
        o.get("type") in CODEX_EXEC_EVENTS for o in s.objects
    )


_FLAT_ITEMS = frozenset({"message", "reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call",
                         "function_call_output", "custom_tool_call_output", "local_shell_call_output"})


def _rollout_record(o: dict[str, Any]) -> bool:
    """A line a rollout holds: an enveloped line, an item the oldest rollouts wrote flat, or their header."""
    return is_codex_line(o) or (o.get("type") in _FLAT_ITEMS and "role" not in o) or (
        "instructions" in o and "timestamp" in o) or (o.get("type") == "message" and "content" in o)


def detect(s: Sniff) -> Claim | None:
    """JSONL with `{type, payload}` lines of Codex's item and event types, every line a rollout record; or
    `codex exec --json` events, every line an exec event."""
    if s.is_dir or s.is_zip or (s.document is not None and len(s.objects) < 2):
        return None
    exec_events = any(o.get("type") == "thread.started" or str(o.get("type", "")).startswith("item.") for o in s.objects)
    if exec_events and not any(is_codex_line(o) for o in s.objects):
        return keyed(True, {"`codex exec --json` events (thread.started, item.*)": True,
                            "every line an exec event": _exec_stream(s)})
    return keyed(any(is_codex_line(o) for o in s.objects), {
        "rollout lines ({type, payload})": True, "every line a rollout record": all(_rollout_record(o) for o in s.objects)})


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the rollout (or the exec event stream) line by line."""
    import reviewui.core.transcript.codex as codex  # on load, not import: see formats/__init__.py
    import reviewui.core.transcript.codex_exec as codex_exec

    if _exec_stream(s):
        return codex_exec.load(path, counter)
    return codex.load(path, counter)


FORMAT = Format(
    "codex", detect, load, "codex/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
    ("codex-cli", "codex-rollout"),
)
