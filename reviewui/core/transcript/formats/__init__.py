"""One module per transcript format, each declaring its `FORMAT`; `FORMAT_LIST` is the detection order.

The order matters only where shapes overlap: an Inspect AI zip or an Aider
Markdown file is told by its first bytes; Codex, Copilot CLI and Claude Code
JSONL by their line envelopes; Cline and OpenCode by the marks their message
lists carry (`ts`, `info` + `parts`; OpenCode's Markdown export by its
`**Session ID:** ses_…` line, Cursor's SpecStory Markdown by its header); an OpenHands resolver record has a `history` like a SWE-agent
trajectory and so is asked first; plain OpenAI-shaped message lists (and empty
documents) are the last resort.

Detection asks every format and loading uses one, so a module whose loader
lives in a module of its own imports it inside `load`: the other
loaders (their regexes, zipfile, the OpenHands linker) are not imported on
every start of `reviewui transcript`, whose start-up is a tenth of its time
on a 100 MB session (bench/bench_transcript.py --headless).
"""

from __future__ import annotations

from reviewui.core.transcript.formats import (
    aider,
    anthropic,
    claude_code,
    cline,
    copilot_chat,
    copilot_cli,
    gemini_cli,
    codex,
    cursor,
    inspect_ai,
    mini_swe_agent,
    openai,
    opencode,
    openhands,
    qwen_code,
    swe_agent,
)
from reviewui.core.transcript.format_spec import Format

FORMAT_LIST: tuple[Format, ...] = (
    inspect_ai.FORMAT,
    aider.FORMAT,
    cursor.FORMAT,
    codex.FORMAT,
    copilot_cli.FORMAT,
    copilot_chat.FORMAT,
    gemini_cli.FORMAT,
    claude_code.FORMAT,
    qwen_code.FORMAT,
    openhands.FORMAT,
    cline.FORMAT,
    opencode.FORMAT,
    mini_swe_agent.FORMAT,
    swe_agent.FORMAT,
    anthropic.FORMAT,
    openai.FORMAT,
)
"""Every registered format, in detection order."""
