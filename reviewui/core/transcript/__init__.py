"""The agent's own record of the run: load it, normalize it, flag the turns worth a look.

`load_transcript` reads any registered transcript format (Claude Code, Codex,
OpenAI or Anthropic message lists, mini-swe-agent, SWE-agent, OpenHands,
Aider, Inspect AI; plain or gzip; see `registry` and `formats/`), detecting
the format unless told, and returns a frozen `Transcript`.
`link_hunks` ties diff hunks to the turns that wrote them and `render_text`
prints a transcript for the headless `reviewui transcript FILE` command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewui.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from reviewui.core.transcript.linking import HunkLinks, link_hunks
    from reviewui.core.transcript.loading import canonical_format, detect_format, format_names, load_transcript
    from reviewui.core.transcript.names import FORMATS
    from reviewui.core.transcript.model import FLAGS, FileEdit, ToolCall, Transcript, Turn, Usage
    from reviewui.core.transcript.render import render_text

# Loaded on first use: the CLI imports `transcript.names` for its help text on every
# start, and that must not load every format's loader with it.
_HOME = {
    "HunkLinks": "linking", "link_hunks": "linking",
    "canonical_format": "loading", "detect_format": "loading", "format_names": "loading",
    "load_transcript": "loading",
    "FLAGS": "model", "FORMATS": "names", "FileEdit": "model", "ToolCall": "model", "Transcript": "model",
    "Turn": "model", "Usage": "model",
    "render_text": "render",
}


__getattr__ = lazy_attributes(__name__, _HOME)

__all__ = [
    "FLAGS",
    "FORMATS",
    "FileEdit",
    "HunkLinks",
    "ToolCall",
    "Transcript",
    "Turn",
    "Usage",
    "canonical_format",
    "detect_format",
    "format_names",
    "link_hunks",
    "load_transcript",
    "render_text",
]
