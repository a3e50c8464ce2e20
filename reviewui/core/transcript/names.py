"""The transcript format names: a leaf module, so the CLI's help can list them without loading any format."""

from __future__ import annotations

FORMATS: tuple[str, ...] = (
    "claude-code",
    "codex",
    "openai",
    "anthropic",
    "mini-swe-agent",
    "swe-agent",
    "openhands",
    "aider",
    "inspect-ai",
    "gemini-cli",
    "copilot-cli",
    "cline",
    "opencode",
    "qwen-code",
    "cursor",
    "copilot-chat",
)
"""Every format name a transcript can report (the registry in `formats/` is checked against it)."""
