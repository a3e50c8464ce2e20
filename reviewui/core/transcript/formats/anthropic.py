"""Anthropic-shaped message lists (content blocks, a top-level `system`, `stop_reason`)."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.formats._shape import document, messages_claim
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions
from reviewui.core.transcript.source import LineCounter

NAME = "anthropic"


def detect(s: Sniff) -> Claim | None:
    """A message list with Anthropic's marks (content blocks, a top-level `system`, `stop_reason`) whose items
    are all messages."""
    return messages_claim(s, NAME, "Anthropic marks (tool_use/thinking blocks, `system`, `stop_reason`)")


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the message list (a document, or JSONL one message per line)."""
    import reviewui.core.transcript.messages as messages  # on load, not import: see formats/__init__.py

    if s.document is None and not s.is_dir and s.objects:
        return messages.load_jsonl(path, counter, NAME)
    notes: list[str] = []
    run = messages.load_document(document(path, s, counter, notes), NAME, counter)
    run.notes.extend(notes)
    return run


FORMAT = Format(NAME, detect, load, "anthropic_messages.json", ("anthropic-messages",))
