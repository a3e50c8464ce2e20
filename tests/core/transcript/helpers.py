"""Shared paths and stand-ins for the transcript tests.

The project's own fixtures (tests/fixtures/transcripts), each small and each
covering cases the real samples in ../shared/transcripts lack:

- claude_code_red_green.jsonl (+ .gz, byte-identical when decompressed): a
  response cut off by a synthetic `max_output_tokens` line after its thinking
  (truncated, reasoning-only, reasoning-resent); a red pytest run, then an Edit
  of an existing test assertion (edits-test-after-failure); a `TOUCH:` line and
  a Write whose result carries `originalFile`; a green run; a compaction
  boundary and summary; a final claim after a model switch with a cache miss;
  plus meta, sidechain, progress, snapshot and queue lines that are not turns.
- claude_code_garbage.jsonl: valid lines around five malformed ones (not JSON,
  a cut-off object, an array, invalid UTF-8, a turn line without a message)
  and an unknown line type.
- codex_red_green.jsonl: AGENTS.md and environment context sent as user
  messages, `apply_patch` adding a test, a red exec, a patch rewriting an
  existing assertion, a model change in `turn_context` with a cache miss, a
  final answer and task_complete; token_count written twice per call.
- openai_prefix_change.jsonl: per-turn metadata at the top of the system
  prompt (prompt-changed + cache-miss), DeepSeek-style `reasoning_content`,
  an inline `<think>` block, a `length` stop with reasoning only.
- anthropic_messages.json: a `system` + `messages` request with thinking,
  redacted thinking, `max_tokens`, a failed str_replace on a test, "Action: done".
- swe_agent_red_green.traj: a demonstration (left out), a red run, a
  `str_replace_editor` rewrite of a test, a classic `edit 2:2` on the open file, submit.
- openhands_v0_test_edit.json: run (exit 1), str_replace_editor edit of a
  test with its edit observation, condensation, finish.
- openhands_v1_conversation/: base_state.json usage, a FileEditorAction
  creating a test, a FinishAction, one broken event file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "transcripts"
SAMPLES = REPO / ".." / "shared" / "transcripts"


@dataclass(frozen=True)
class Line:
    """A stand-in for reviewui.core.hunks.DiffLine."""

    kind: str
    text: str
    new_no: int | None = None
    old_no: int | None = None


@dataclass(frozen=True)
class FakeHunk:
    """A stand-in for reviewui.core.hunks.Hunk (only what linking reads)."""

    file: str
    index: int
    lines: tuple[Line, ...]


def hunk(file: str, index: int, *lines: str) -> FakeHunk:
    """Build a hunk from `+added`, `-removed` and ` context` lines."""
    kinds = {"+": "added", "-": "removed", " ": "context"}
    return FakeHunk(file, index, tuple(Line(kinds[ln[0]], ln[1:]) for ln in lines))
