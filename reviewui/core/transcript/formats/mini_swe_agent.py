"""mini-swe-agent trajectories (`.traj.json`, `trajectory_format: mini-swe-agent-*`)."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff
from reviewui.core.transcript.formats._shape import document, messages_claim
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions
from reviewui.core.transcript.source import LineCounter

NAME = "mini-swe-agent"


def detect(s: Sniff) -> Claim | None:
    """A message list with mini-swe-agent's marks (`trajectory_format`, `info.mini_version`, `extra.actions`,
    ```mswea_bash_command``, a `.traj.json` name) whose items are all messages."""
    return messages_claim(s, NAME, "mini-swe-agent marks (trajectory_format, mini_version, .traj.json)")


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the message list (a document, or JSONL one message per line)."""
    import reviewui.core.transcript.messages as messages  # on load, not import: see formats/__init__.py

    if s.document is None and not s.is_dir and s.objects:
        return messages.load_jsonl(path, counter, NAME)
    notes: list[str] = []
    run = messages.load_document(document(path, s, counter, notes), NAME, counter)
    run.notes.extend(notes)
    return run


FORMAT = Format(NAME, detect, load, "mini-swe-agent/upstream_test_github_issue.traj.json", ("mini", "mini_swe_agent", "mini-swe"))
