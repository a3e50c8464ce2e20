"""OpenHands: V0 event lists, V1 conversation folders, and resolver / evaluation output JSONL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff, event_folder
from reviewui.core.transcript.formats._shape import document
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions, keyed
from reviewui.core.transcript.source import LineCounter


_RESOLVER_KEYS = ("instance_id", "instruction", "issue", "git_patch", "test_result", "instance")
_RESOLVER = "resolver fields (instance_id, instruction, git_patch, …)"
_EVENTS = "`history` of events (`action`/`observation`)"


def _resolver_record(o: Any) -> bool:
    return isinstance(o, dict) and isinstance(o.get("history"), list) and any(k in o for k in _RESOLVER_KEYS)


def _event_history(o: dict[str, Any]) -> bool:
    """True when the record's `history` holds OpenHands events (an `action` or `observation` each; older
    resolver output flattens them without their `source`), not a SWE-agent history of messages."""
    hist = o.get("history")
    items = [x for x in hist[:20] if isinstance(x, dict)] if isinstance(hist, list) else []
    return not items or any("action" in x or "observation" in x for x in items)


def _records_claim(records: list[dict[str, Any]]) -> Claim | None:
    """Resolver records: runs with a `history` and the resolver's own fields, the history made of events."""
    hist = [o for o in records if isinstance(o.get("history"), list)]
    return keyed(any(_resolver_record(o) for o in hist), {
        _RESOLVER: True, _EVENTS: bool(hist) and all(_event_history(o) for o in hist)})


def _events_claim(doc: list[Any]) -> Claim | None:
    items = [x for x in doc[:50] if isinstance(x, dict)]
    return keyed(any("action" in x or "observation" in x for x in items), {
        "events with `action`/`observation`": True, "event `source`": any("source" in x for x in items)})


def detect(s: Sniff) -> Claim | None:
    """An event folder, a V0 event list (`action`/`observation` events with their `source`), or resolver records
    (one run with its `history` of events per line)."""
    if s.is_dir:
        return keyed(event_folder(s.path), {"events/*.json": True})
    if s.document is not None:
        doc = s.doc
        if isinstance(doc, list):
            return _events_claim(doc)
        return _records_claim([doc]) if isinstance(doc, dict) else None
    return _records_claim(list(s.objects))


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
