"""SWE-agent `.traj` trajectories (`history` and/or `trajectory` steps)."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.formats._shape import document, shape
from reviewui.core.transcript.format_spec import Format, LoadOptions
from reviewui.core.transcript.source import LineCounter


def detect(s: Sniff) -> bool:
    """A JSON object with a `history` or `trajectory` list and no message-list markers."""
    return s.document is not None and shape(s) == "swe-agent"


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the trajectory document (a damaged one as far as it parses)."""
    import reviewui.core.transcript.swe_agent as swe_agent  # on load, not import: see formats/__init__.py

    notes: list[str] = []
    run = swe_agent.load_document(document(path, s, counter, notes), counter)
    run.notes.extend(notes)
    return run


FORMAT = Format("swe-agent", detect, load, "swe-agent/demo_function_calling_simple.traj", ("swe_agent", "sweagent"))
