"""SWE-agent `.traj` trajectories (`history` and/or `trajectory` steps)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.formats._shape import document, shape
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions, keyed
from reviewui.core.transcript.source import LineCounter


def _steps(doc: Any) -> bool:
    """True when the `history` items are messages (`role`) and the `trajectory` items steps (`action`, `observation`
    or `response`): an OpenHands resolver record's `history` of events is not a SWE-agent history."""
    hist = doc.get("history") if isinstance(doc.get("history"), list) else []
    traj = doc.get("trajectory") if isinstance(doc.get("trajectory"), list) else []
    return all(isinstance(x, dict) and "role" in x for x in hist[:20]) and all(
        isinstance(x, dict) and ("action" in x or "observation" in x or "response" in x) for x in traj[:20])


def detect(s: Sniff) -> Claim | None:
    """A JSON object with a `history` or `trajectory` list and no message-list markers, whose history items are
    messages and trajectory items steps."""
    if s.document is None or shape(s) != "swe-agent":
        return None
    return keyed(True, {"`history` or `trajectory` list": True,
                        "history messages (`role`) and trajectory steps (`action`)": _steps(s.doc)})


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the trajectory document (a damaged one as far as it parses)."""
    import reviewui.core.transcript.swe_agent as swe_agent  # on load, not import: see formats/__init__.py

    notes: list[str] = []
    run = swe_agent.load_document(document(path, s, counter, notes), counter)
    run.notes.extend(notes)
    return run


FORMAT = Format("swe-agent", detect, load, "swe-agent/demo_function_calling_simple.traj", ("swe_agent", "sweagent"))
