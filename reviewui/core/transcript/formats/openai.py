"""OpenAI-shaped message lists (a JSON array, an object holding `messages`, JSONL of messages or chat-completion responses); empty documents too."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.formats._shape import document, messages_claim
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions, keyed
from reviewui.core.transcript.source import LineCounter

NAME = "openai"


def detect(s: Sniff) -> Claim | None:
    """A message list of OpenAI's shape (the last resort of the shape test) whose items are all messages."""
    return messages_claim(s, NAME, "a message list (a JSON array, `messages`, JSONL or `choices`)")


def _empty(s: Sniff) -> bool:
    doc = s.doc
    if doc == [] or doc == {}:
        return True
    return isinstance(doc, dict) and doc.get("messages") == [] and len(doc) <= 3


def detect_or_empty(s: Sniff) -> Claim | None:
    """A message list of this shape, or an empty document (`[]`, `{}`, no messages): zero turns."""
    if s.document is not None and _empty(s):
        return keyed(True, {"an empty document": True})
    return detect(s)


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the message list (a document, or JSONL one message per line)."""
    import reviewui.core.transcript.messages as messages  # on load, not import: see formats/__init__.py

    if s.document is None and not s.is_dir and s.objects:
        return messages.load_jsonl(path, counter, NAME)
    notes: list[str] = []
    run = messages.load_document(document(path, s, counter, notes), NAME, counter)
    run.notes.extend(notes)
    return run


FORMAT = Format(NAME, detect_or_empty, load, "openai/openhands_fncall_message_list_claude-sonnet-4.json", ("openai-chat", "chat"))
