"""Roo Code on its real `ui_messages.json` (issue 28): Cline's UI log, with Roo's own records.

Expected values come from the records themselves, read here with plain JSON.
"""

from __future__ import annotations

import json

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.formats import cline_ui
from reviewui.core.transcript.source import LineCounter
from tests.core.transcript.helpers import FIXTURES

ROO_UI = FIXTURES / "cline" / "scratchspace_roo_ui_messages_records2-16.json"


def _records() -> list[dict]:
    return json.loads(ROO_UI.read_text())


def test_roo_mcp_tool_use_is_a_call_and_its_response_is_that_calls_result() -> None:
    ui = _records()
    ask = json.loads(next(r["text"] for r in ui if r.get("ask") == "use_mcp_server"))
    response = next(r["text"] for r in ui if r.get("say") == "mcp_server_response")
    t = load_transcript(ROO_UI)
    calls = [(x, c) for x in t.turns for c in x.tool_calls if c.kind == "other" and ask["toolName"] in c.name]
    assert len(calls) == 1, [c.name for x in t.turns for c in x.tool_calls]
    turn, call = calls[0]
    assert ask["serverName"] in call.name and turn.role == "assistant"
    run = cline_ui.load(ui, LineCounter())
    result = next(d for d in run.drafts if d.role == "tool" and "".join(d.texts) == response)
    assert result.result_of == call.id  # not the readFile call made just before it
    assert result.result_kind == "other"


def test_roo_usage_per_request_and_every_tool_of_the_log() -> None:
    ui = _records()
    reqs = [json.loads(r["text"]) for r in ui if r.get("say") == "api_req_started"]
    tools = [json.loads(r["text"])["tool"] for r in ui if r.get("ask") == "tool"]
    t = load_transcript(ROO_UI)
    replies = [x for x in t.turns if x.role == "assistant"]
    # the last request's reply is past the excerpt: the three before it each made their own turn
    assert [x.usage.output for x in replies] == [r["tokensOut"] for r in reqs[:3]]
    assert [x.usage.input for x in replies] == [r["tokensIn"] for r in reqs[:3]]
    names = [c.name for x in replies for c in x.tool_calls if c.kind != "other" or c.name in tools]
    assert [n for n in names if n in tools] == tools
