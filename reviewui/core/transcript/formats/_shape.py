"""Shape tests the message-list detectors share (which flavor a document or JSONL head is)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewui.core.errors import ReviewError
from reviewui.core.transcript.detect import Sniff, from_document, message_objects_flavor
from reviewui.core.transcript.format_spec import Claim, keyed
from reviewui.core.transcript.source import LineCounter, load_document


def shape(s: Sniff) -> str | None:
    """The format a parsed document or its JSONL lines look like (None when neither fits)."""
    if s.document is not None:
        fmt = from_document(s.doc, s.path.name)
        if fmt is not None:
            return fmt
    return message_objects_flavor(s.objects)


def document(path: Path, s: Sniff, counter: LineCounter, run_notes: list[str] | None = None) -> Any:
    """The parsed document of a document format, read whole when the sniff did not.

    A damaged document's unread lines go into `counter` and its note into
    `run_notes`. Raises ReviewError when the file is a folder or not JSON.
    """
    if s.is_dir:
        raise ReviewError(f"{path} is a folder; this format is a file")
    if s.document is None:
        return load_document(path)
    counter.skipped += s.document.skipped
    if s.document.note and run_notes is not None:
        run_notes.append(s.document.note)
    return s.doc


def message_items(s: Sniff) -> list[Any]:
    """The items of the message list a document or its JSONL lines hold (the first 50), or []."""
    doc = s.doc
    if isinstance(doc, list):
        return doc[:50]
    if isinstance(doc, dict):
        msgs = doc.get("messages")
        if isinstance(msgs, list):
            return msgs[:50]
        return [doc]  # one message or one chat-completion response
    return list(s.objects)


def is_message(x: Any) -> bool:
    """True for a message (a `role`) or a chat-completion response (`choices`)."""
    return isinstance(x, dict) and ("role" in x or "choices" in x)


ROLES = "`role` on every message"
"""The field a message-list format requires of every item (what its refusal names)."""


def messages_claim(s: Sniff, name: str, mark: str) -> Claim | None:
    """The claim of message-list format `name`: the shape test says it is `name` (its `mark`), and every
    item of the list (or every JSONL line) is a message; an empty document claims nothing here."""
    if s.is_dir or s.is_zip or shape(s) != name:
        return None
    items = message_items(s)
    return keyed(True, {mark: True, ROLES: bool(items) and all(is_message(x) for x in items)})
