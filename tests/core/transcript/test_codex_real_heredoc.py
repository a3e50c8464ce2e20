"""Codex on a real, unredacted rollout whose edits go through `apply_patch <<'PATCH'` heredocs in `shell` calls.

Expected values are read from the rollout's own lines here: each such call's
patch body (between its `*** Update File:` header and `*** End Patch`), the
file the header names, and the exit code its output reports.
"""

from __future__ import annotations

import json
import re

from reviewui.core.transcript import load_transcript
from tests.core.transcript.helpers import FIXTURES

ROLLOUT = FIXTURES / "codex" / "rollout-2025-11-17_chatbot-ui_lines1-12_252-279.jsonl"
_HEADER = re.compile(r"^\*\*\* Update File: (.+)$", re.M)


def _heredoc_calls() -> list[tuple[str, str, str]]:
    """(call id, file, patch body) of every shell call that runs `apply_patch <<` in the rollout."""
    out = []
    for line in ROLLOUT.read_text().splitlines():
        p = json.loads(line).get("payload") or {}
        if p.get("type") != "function_call" or p.get("name") != "shell":
            continue
        script = json.loads(p["arguments"])["command"][-1]
        if not script.startswith("apply_patch <<"):
            continue
        header = _HEADER.search(script)
        assert header is not None
        body = script[header.end() + 1:script.index("*** End Patch")].rstrip("\n")
        out.append((p["call_id"], header.group(1), body))
    return out


def test_real_apply_patch_heredocs_are_patch_edits_of_the_named_file() -> None:
    calls = _heredoc_calls()
    assert len(calls) == 2
    t = load_transcript(ROLLOUT)
    edits = [e for x in t.turns for e in x.edits]
    assert [(e.call_id, e.path, e.operation) for e in edits] == [(c, f, "patch") for c, f, _ in calls]
    for e, (_, _, body) in zip(edits, calls, strict=True):
        assert (e.patch or "").rstrip("\n") == body
    writers = [x for x in t.turns if x.files_written]
    assert [x.files_written for x in writers] == [(f,) for _, f, _ in calls]


def test_real_apply_patch_heredocs_are_commands_with_their_exit_codes() -> None:
    t = load_transcript(ROLLOUT)
    patches = [c for x in t.turns for c in x.commands if c.command.startswith("apply_patch <<")]
    assert [c.call_id for c in patches] == [c for c, _, _ in _heredoc_calls()]
    assert [c.exit for c in patches] == [0, 0]  # each output says {"metadata": {"exit_code": 0}}
    assert all((c.output_head or "").startswith("Success. Updated the following files:") for c in patches)
