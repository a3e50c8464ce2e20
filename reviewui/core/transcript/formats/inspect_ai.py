"""Inspect AI eval logs (`.eval` zip archives and `.json` logs)."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.formats._shape import document
from reviewui.core.transcript.format_spec import Format, LoadOptions
from reviewui.core.transcript.source import LineCounter


def detect(s: Sniff) -> bool:
    """A zip archive, or a JSON log with an `eval` header and `samples`/`status`."""
    if s.is_zip:
        return True
    doc = s.doc
    return isinstance(doc, dict) and isinstance(doc.get("eval"), dict) and ("samples" in doc or "status" in doc)


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read one sample of the log (`--instance ID` or `ID:EPOCH`; default the first)."""
    import reviewui.core.transcript.inspect_ai as inspect_ai  # on load, not import: see formats/__init__.py

    if s.is_zip:
        return inspect_ai.load_zip(path, counter, opts.instance)
    notes: list[str] = []
    run = inspect_ai.load_log(document(path, s, counter, notes), counter, opts.instance)
    run.notes[:0] = notes
    return run


FORMAT = Format("inspect-ai", detect, load, "inspect-ai/log_message_deduplication.eval", ("inspect", "inspect_ai"))
