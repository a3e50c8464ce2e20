"""Inspect AI eval logs (`.eval` zip archives and `.json` logs)."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.formats._shape import document
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions, keyed
from reviewui.core.transcript.source import LineCounter


_MEMBERS = ("header.json", "_journal/start.json")


def _log_members(path: Path) -> bool:
    """True when the zip archive holds an Inspect log's `header.json` or `_journal/start.json`."""
    import zipfile  # only for a zip: most transcripts are not

    try:
        with zipfile.ZipFile(path) as z:
            return any(n in _MEMBERS for n in z.namelist())
    except (OSError, zipfile.BadZipFile, ValueError):
        return False


def detect(s: Sniff) -> Claim | None:
    """A zip archive holding an Inspect log's members, or a JSON log with an `eval` header and `samples`/`status`."""
    if s.is_zip:
        return keyed(True, {"a zip archive": True, "Inspect log members (header.json, _journal/start.json)":
                            _log_members(s.path)})
    doc = s.doc
    return keyed(isinstance(doc, dict) and isinstance(doc.get("eval"), dict), {
        "`eval` header": True, "`samples` or `status`": isinstance(doc, dict) and ("samples" in doc or "status" in doc)})


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
