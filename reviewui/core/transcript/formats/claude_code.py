"""Claude Code session and subagent JSONL (`~/.claude/projects/<cwd>/<session>.jsonl`, `subagents/agent-*.jsonl`)."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff, is_claude_code_line, is_codex_line
from reviewui.core.transcript.format_spec import Format, LoadOptions
from reviewui.core.transcript.source import LineCounter


def detect(s: Sniff) -> bool:
    """JSONL whose lines carry Claude Code's session envelope (sessionId, uuid, parentUuid, agentId)."""
    if s.document is not None and not s.objects:
        return False
    return not any(is_codex_line(o) for o in s.objects) and any(is_claude_code_line(o) for o in s.objects)


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the session (or subagent file) line by line."""
    import reviewui.core.transcript.claude_code as claude_code  # on load, not import: see formats/__init__.py

    return claude_code.load(path, counter)


FORMAT = Format(
    "claude-code", detect, load, "claude-code/session_task_subagent_lines35-57.jsonl", ("claude", "claude_code", "cc")
)
