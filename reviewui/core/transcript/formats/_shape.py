"""Shape tests the message-list detectors share (which flavor a document or JSONL head is)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewui.core.errors import ReviewError
from reviewui.core.transcript.detect import Sniff, from_document, message_objects_flavor
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


