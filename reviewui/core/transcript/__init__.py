"""The agent's own record of the run: load it, normalize it, flag the turns worth a look.

`load_transcript` reads any supported transcript (Claude Code, Codex, OpenAI
or Anthropic message lists, mini-swe-agent, SWE-agent, OpenHands; plain or
gzip), detecting the format unless told, and returns a frozen `Transcript`.
`link_hunks` ties diff hunks to the turns that wrote them and `render_text`
prints a transcript for the headless `reviewui transcript FILE` command.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any, Iterable

from reviewui.core.bounded import check_input
from reviewui.core.errors import ReviewError
from reviewui.core.roles import DEFAULT_TEST_GLOBS
from reviewui.core.transcript import claude_code, codex, messages, openhands, swe_agent
from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import canonical_format, detect, detect_format, document_or_none
from reviewui.core.transcript.flags import finalize
from reviewui.core.transcript.linking import HunkLinks, link_hunks
from reviewui.core.transcript.model import (
    FLAGS,
    FORMATS,
    FileEdit,
    ToolCall,
    Transcript,
    Turn,
    Usage,
)
from reviewui.core.transcript.render import render_text
from reviewui.core.transcript.source import LineCounter, load_document

__all__ = [
    "FLAGS",
    "FORMATS",
    "FileEdit",
    "HunkLinks",
    "ToolCall",
    "Transcript",
    "Turn",
    "Usage",
    "detect_format",
    "link_hunks",
    "load_transcript",
    "render_text",
]


def load_transcript(
    path: str | Path,
    format: str | None = None,
    *,
    test_globs: Iterable[str] = DEFAULT_TEST_GLOBS,
) -> Transcript:
    """Load the transcript at `path` (a file, a `.gz` file, or an OpenHands conversation folder).

    `format` forces a format (one of FORMATS, or an alias such as `claude`);
    otherwise it is detected. `test_globs` decide which paths are tests for
    the test flags. Malformed lines are skipped and counted in
    `skipped_lines`. Raises ReviewError when the file cannot be read, the
    format is unknown or cannot be detected, or nothing in it parses.
    """
    p = Path(path)
    if not p.exists():
        raise ReviewError(f"no such transcript: {p}")
    check_input(p, "transcript", allow_dir=True)  # no FIFO, device or oversized file (core/bounded.py)
    counter = LineCounter()
    doc: Any = None
    if format:
        fmt = canonical_format(format)
    else:
        fmt, doc = detect(p)
    # Loading creates hundreds of thousands of long-lived objects and no reference
    # cycles; the cyclic collector would re-scan them again and again (a third of the
    # load time on a 100 MB session) for nothing, so it is paused meanwhile.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        run = _load(p, fmt, doc, counter)
        if not run.drafts:
            raise ReviewError(f"nothing parseable in transcript {p.name} as {fmt}")
        return finalize(run, fmt, str(p), counter.skipped, test_globs)
    finally:
        if gc_was_enabled:
            gc.enable()


def _load(p: Path, fmt: str, doc: Any, counter: LineCounter) -> Run:
    if fmt == "claude-code":
        return claude_code.load(p, counter)
    if fmt == "codex":
        return codex.load(p, counter)
    if fmt == "openhands":
        if p.is_dir():
            return openhands.load_folder(p, counter)
        doc = doc if doc is not None else load_document(p)
        if isinstance(doc, dict) and isinstance(doc.get("events"), list):
            doc = doc["events"]
        return openhands.load_events(doc if isinstance(doc, list) else [], counter)
    if p.is_dir():
        raise ReviewError(f"{p} is a folder; a {fmt} transcript is a file")
    if fmt == "swe-agent":
        return swe_agent.load_document(doc if doc is not None else load_document(p), counter)
    if doc is None:
        doc = document_or_none(p)
    if doc is None:
        return messages.load_jsonl(p, counter, fmt)
    return messages.load_document(doc, fmt, counter)
