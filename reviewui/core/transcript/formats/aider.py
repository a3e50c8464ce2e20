"""Aider chat histories (`.aider.chat.history.md`)."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import AIDER_HEADER, Sniff
from reviewui.core.transcript.format_spec import Format, LoadOptions
from reviewui.core.transcript.source import LineCounter


def detect(s: Sniff) -> bool:
    """Aider's history file name, or its `# aider chat started at` header."""
    if s.is_dir or s.is_zip:
        return False
    if s.path.name.endswith(".aider.chat.history.md"):
        return True
    return s.document is None and AIDER_HEADER in s.head[:20_000]


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the Markdown history (the last session in it, or `--instance N` for the N-th)."""
    import reviewui.core.transcript.aider as aider  # on load, not import: see formats/__init__.py

    return aider.load(path, counter, opts.instance)


FORMAT = Format("aider", detect, load, "aider/aider_chat_history_session_2024-08-06_08-55-14.md", ("aider-chat",))
