"""Aider chat histories (`.aider.chat.history.md`)."""

from __future__ import annotations

import re
from pathlib import Path

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import AIDER_HEADER, Sniff
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions, keyed
from reviewui.core.transcript.source import LineCounter


_LINES = re.compile(r"^(?:#### |> )", re.M)


def detect(s: Sniff) -> Claim | None:
    """Aider's history file name or its `# aider chat started at` header, on Markdown text (not JSON) with
    Aider's `#### ` prompt or `> ` output lines."""
    if s.is_dir or s.is_zip:
        return None
    head = s.head[:20_000]
    return keyed(s.path.name.endswith(".aider.chat.history.md") or AIDER_HEADER in head, {
        "`# aider chat started at` header or the history file name": True,
        "Markdown text, not JSON": s.document is None and not s.objects,
        "`#### ` prompt or `> ` output lines": _LINES.search(head) is not None,
    })


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the Markdown history (the last session in it, or `--instance N` for the N-th)."""
    import reviewui.core.transcript.aider as aider  # on load, not import: see formats/__init__.py

    return aider.load(path, counter, opts.instance)


FORMAT = Format("aider", detect, load, "aider/aider_chat_history_session_2024-08-06_08-55-14.md", ("aider-chat",))
