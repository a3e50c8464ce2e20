"""OpenHands: V0 event lists, V1 conversation folders, and resolver / evaluation output JSONL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff, event_folder
from reviewui.core.transcript.formats._shape import document, shape
from reviewui.core.transcript.format_spec import Format, LoadOptions
from reviewui.core.transcript.source import LineCounter


def _resolver_record(o: Any) -> bool:
    return isinstance(o, dict) and isinstance(o.get("history"), list) and any(
        k in o for k in ("instance_id", "instruction", "issue", "git_patch", "test_result", "instance")
    )


def detect(s: Sniff) -> bool:
    """An event folder, a V0 event list, or resolver records (one run with its `history` per line)."""
    if s.is_dir:
        return event_folder(s.path)
    if s.document is not None:
        return shape(s) == "openhands" or _resolver_record(s.doc)
    return any(_resolver_record(o) for o in s.objects)


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the folder, the event list, or the chosen run of resolver output."""
    import reviewui.core.transcript.openhands as openhands  # on load, not import: see formats/__init__.py
    import reviewui.core.transcript.openhands_resolver as openhands_resolver

    if s.is_dir:
        return openhands.load_folder(path, counter)
    if s.document is None and s.objects:
        return openhands_resolver.load(path, counter, opts.instance, opts.branch_files)
    notes: list[str] = []
    doc = document(path, s, counter, notes)
    if _resolver_record(doc):
        run = openhands_resolver.load_records([doc], counter, opts.instance, opts.branch_files)
    else:
        if isinstance(doc, dict) and isinstance(doc.get("events"), list):
            doc = doc["events"]
        run = openhands.load_events(doc if isinstance(doc, list) else [], counter)
    run.notes[:0] = notes
    return run


FORMAT = Format(
    "openhands", detect, load, "openhands/resolver_output.jsonl", ("open-hands", "openhands-resolver")
)
