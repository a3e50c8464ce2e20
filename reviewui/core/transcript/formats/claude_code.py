"""Claude Code session and subagent JSONL (`~/.claude/projects/<cwd>/<session>.jsonl`, `subagents/agent-*.jsonl`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.detect import Sniff, is_claude_code_line, is_codex_line
from reviewui.core.transcript.format_spec import Claim, Format, LoadOptions, claim
from reviewui.core.transcript.source import LineCounter


def _anthropic_message(o: dict[str, Any]) -> bool:
    m = o.get("message")
    return not isinstance(m, dict) or "content" in m or "parts" not in m


def detect(s: Sniff) -> Claim | None:
    """JSONL of Claude Code's session envelope (sessionId, uuid, parentUuid, agentId) whose messages hold `content`.

    A line with the envelope but a Gemini `message.parts` (Qwen Code's records) makes the claim weak.
    """
    if (s.document is not None and not s.objects) or any(is_codex_line(o) for o in s.objects):
        return None
    lines = [o for o in s.objects if is_claude_code_line(o)]
    return claim({"session envelope (sessionId, uuid, parentUuid)": bool(lines),
                  "message.content": bool(lines) and all(_anthropic_message(o) for o in lines)})


def load(path: Path, s: Sniff, counter: LineCounter, opts: LoadOptions) -> Run:
    """Read the session (or subagent file) line by line."""
    import reviewui.core.transcript.claude_code as claude_code  # on load, not import: see formats/__init__.py

    return claude_code.load(path, counter)


FORMAT = Format(
    "claude-code", detect, load, "claude-code/session_task_subagent_lines35-57.jsonl", ("claude", "claude_code", "cc")
)
