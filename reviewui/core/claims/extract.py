"""The claims a transcript makes about tests: each test run the agent made and what it reported,
and the final messages that say the suite is green.

A run is a shell command a turn ran (`Turn.commands`, as each loader records
it) that holds a test run (`commands.py`), read with the turn holding its whole
output, whose summary line says what happened (`summary.py`). A final claim is the agent's own prose in its last replies
saying the tests pass ("all tests pass", "41 passed", "the line is already
correct", a bare "GO"): code, quotes and tool calls in the text do not count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Sequence

from reviewui.core.claims.commands import RunCommand, find_test_command
from reviewui.core.claims.summary import TestSummary, parse_summary
from reviewui.core.transcript.model import Transcript, Turn
from reviewui.core.transcript.signals import claims_done_text, prose

ClaimKind = Literal["run", "final"]

_GREEN = re.compile(
    r"\ball (?:(?:the|\d+|of the)\s+)*(?:unit |existing |new )?tests? (?:now )?(?:pass|passed|are passing|succeed)"
    r"|\btests? (?:now )?(?:all )?(?:pass|passed|are (?:all )?(?:passing|green))\b"
    r"|\b(\d+) (?:tests? )?passed\b"
    r"|\b(?:the )?(?:test )?suite (?:is green|passes|passed)\b"
    r"|\balready (?:correct|fixed)\b"
    r"|^\s*\**GO\**\s*[.!]?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_LAST_REPLIES = 3
"""Assistant replies at the end read for a final claim."""


@dataclass(frozen=True)
class Claim:
    """One thing the transcript says about the tests."""

    kind: ClaimKind
    """"run": the agent ran a test command; "final": its closing words say the tests pass."""
    turn: int
    """The turn that makes the claim (the run's result turn, or the final reply)."""
    text: str
    """What the agent said, one line (the summary it got, or its words)."""
    command: RunCommand | None = None
    """The test run (runs only)."""
    reported: TestSummary | None = None
    """What the run's output said (runs), or the count the final words name (`passed` only)."""


def _runs(turns: Sequence[Turn], cwd: str | None, extra: Sequence[str]) -> list[Claim]:
    out: list[Claim] = []
    for turn in turns:
        for run in turn.commands:
            command = find_test_command(run.command, extra)
            if command is None:
                continue
            # The whole output, where the loader linked it (a summary is printed last, past the head).
            result = turns[run.result_turn - 1] if run.result_turn and 0 < run.result_turn <= len(turns) else None
            output = result.text if result is not None else (run.output_head or "")
            summary = parse_summary(output)
            said = summary.describe() if summary else "no summary in its output"
            where = result.index if result is not None else turn.index
            out.append(Claim("run", where, f"{command.text}: {said}", _relative(command, cwd), summary))
    return out


def _relative(command: RunCommand, cwd: str | None) -> RunCommand:
    """The command with paths under the agent's working directory made relative (it ran elsewhere)."""
    if not cwd:
        return command
    root = cwd.rstrip("/") + "/"
    argv = tuple(w[len(root):] if w.startswith(root) else ("." if w == cwd else w) for w in command.argv)
    return RunCommand(command.runner, argv)


def _final(turns: Sequence[Turn]) -> Claim | None:
    replies = [t for t in turns if t.role == "assistant" and t.text.strip()][-_LAST_REPLIES:]
    for turn in reversed(replies):
        words = prose(turn.text[-20_000:])
        m = _GREEN.search(words)
        if m is None and not claims_done_text(turn.text):
            continue
        count = int(m.group(1)) if m is not None and m.group(1) else None
        said = (m.group(0).strip() if m is not None else "the work is done")[:200]
        return Claim("final", turn.index, said, None, TestSummary("claim", count, 0) if count is not None else None)
    return None


def extract_claims(transcript: Transcript, extra_commands: Sequence[str] = ()) -> list[Claim]:
    """Every test run the transcript records and its final green claim, in turn order."""
    claims = _runs(transcript.turns, transcript.cwd, extra_commands)
    final = _final(transcript.turns)
    if final is not None:
        claims.append(final)
    return claims
