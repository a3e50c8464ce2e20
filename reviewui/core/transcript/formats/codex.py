"""OpenAI Codex CLI rollout JSONL (`~/.codex/sessions/…/rollout-*.jsonl`)."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.transcript import codex
from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff, is_codex_line
from reviewui.core.transcript.registry import Format, LoadOptions
from reviewui.core.transcript.source import LineCounter


def detect(s: Sniff) -> bool:
    """JSONL with `{type, payload}` lines of Codex's item and event types."""
    return any(is_codex_line(o) for o in s.objects)


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the rollout line by line."""
    return codex.load(path, counter)


FORMAT = Format(
    "codex", detect, load, "codex/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
    ("codex-cli", "codex-rollout"),
)
