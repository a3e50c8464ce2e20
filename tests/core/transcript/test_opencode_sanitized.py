"""An OpenCode export made with `--sanitize` (issue 28's "export without tool input/output").

`opencode export --sanitize` (anomalyco/opencode#22489) replaces every text,
reasoning, tool input and tool output with a placeholder
`[redacted:<kind>:<part id>]` and a tool's metadata with `{"redacted": ...}`,
keeping ids, roles, times, tokens and tool names. No real sanitized export is
public, so this one is made here from the real Cap sample by those rules.
The placeholders must not read as the agent's words, commands or outputs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from reviewui.core.transcript import load_transcript
from tests.core.transcript.helpers import FIXTURES

REAL = FIXTURES / "opencode" / "Cap_opencode-session_messages1-60.json"
PLACEHOLDER = re.compile(r"\[redacted:")


def _sanitized(tmp_path: Path) -> Path:
    doc = json.loads(REAL.read_text())
    for m in doc["messages"]:
        for p in m["parts"]:
            pid = p.get("id", "prt")
            if p.get("type") in ("text", "reasoning") and str(p.get("text") or "").strip():
                p["text"] = f"[redacted:{p['type']}:{pid}]"
            state = p.get("state")
            if p.get("type") == "tool" and isinstance(state, dict):
                for key in ("input", "output"):
                    if key in state:
                        state[key] = f"[redacted:tool-{key}:{pid}]"
                if "metadata" in state:
                    state["metadata"] = {"redacted": f"tool-metadata:{pid}"}
    out = tmp_path / "sanitized-opencode-session.json"
    out.write_text(json.dumps(doc, indent=2))
    return out


def test_a_sanitized_export_keeps_the_calls_and_usage_and_shows_no_placeholder_as_content(tmp_path: Path) -> None:
    plain, t = load_transcript(REAL), load_transcript(_sanitized(tmp_path))
    assert t.format == "opencode"
    data = t.to_json()
    for turn in data["turns"]:
        assert not PLACEHOLDER.search(turn["text"]) and not PLACEHOLDER.search(turn["reasoning"]), turn
        assert not turn["commands"] and not turn["edits"]  # what a call ran or changed is redacted: unknown
    for turn in t.turns:
        for c in turn.tool_calls:
            assert not PLACEHOLDER.search(json.dumps(c.arguments)), c
    # the calls themselves, their order, the turns' roles, times and usage survive the redaction
    assert [[c.name for c in x.tool_calls] for x in t.turns] == [[c.name for c in x.tool_calls] for x in plain.turns]
    assert [(x.role, x.time, x.usage) for x in t.turns] == [(x.role, x.time, x.usage) for x in plain.turns]
    outputs = [x for x in t.turns if x.role == "tool" and "tool-error" not in x.flags]  # errors are not redacted
    assert outputs and all(x.text == "" and x.note and "redacted" in x.note for x in outputs)
    assert any("--sanitize" in n for n in t.notes)
    assert not any("--sanitize" in n for n in plain.notes)
