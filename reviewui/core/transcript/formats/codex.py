"""OpenAI Codex CLI: rollout JSONL (`~/.codex/sessions/…/rollout-*.jsonl`) and `codex exec --json` streams."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import CODEX_EXEC_EVENTS, Sniff, is_codex_line
from reviewui.core.transcript.format_spec import Format, LoadOptions
from reviewui.core.transcript.source import LineCounter


def _exec_stream(s: Sniff) -> bool:
    return any(o.get("type") == "thread.started" or str(o.get("type", "")).startswith("item.") for o in s.objects) and all(
        o.get("type") in CODEX_EXEC_EVENTS for o in s.objects
    )


def detect(s: Sniff) -> bool:
    """JSONL with `{type, payload}` lines of Codex's item and event types, or `codex exec --json` events."""
    return any(is_codex_line(o) for o in s.objects) or _exec_stream(s)


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
