"""Inspect AI: each assistant turn carries its own model call's usage and time, not the sample's total.

Both logs are real (inspect_ai's own test logs, recorded on gpt-4o-mini). The
expected figures are the `model` events' own `output.usage`, read here from
the file, never from the loader.
"""

from __future__ import annotations

import json

from reviewui.core.transcript import load_transcript
from tests.core.transcript.helpers import FIXTURES

GUIDE = FIXTURES / "inspect-ai" / "2025-05-12T20-28-26-04-00_security-guide.json"
BROWSER = FIXTURES / "inspect-ai" / "2025-05-12T20-27-36-04-00_browser.json"


def _model_events(path, sample=0):  # type: ignore[no-untyped-def]
    s = json.loads(path.read_text())["samples"][sample]
    return s, [e for e in s["events"] if e.get("event") == "model"]


def test_a_reply_has_its_own_call_usage_not_the_sample_total_with_the_scorer() -> None:
    s, events = _model_events(GUIDE)
    own = events[0]["output"]["usage"]
    total = s["model_usage"]["openai/gpt-4o-mini"]
    assert total["input_tokens"] > own["input_tokens"]  # the scorer's call is in the total
    t = load_transcript(GUIDE)
    replies = [x for x in t.turns if x.role == "assistant"]
    assert len(replies) == 1
    assert (replies[0].usage.input, replies[0].usage.output) == (own["input_tokens"], own["output_tokens"])
    assert replies[0].time is not None and replies[0].time.startswith("2025-05-12T20:28:26")


def test_every_call_of_a_multi_call_sample_keeps_its_own_usage_and_time() -> None:
    _, events = _model_events(BROWSER)
    want = [(e["output"]["usage"]["input_tokens"], e["output"]["usage"].get("input_tokens_cache_read", 0)) for e in events]
    t = load_transcript(BROWSER)
    replies = [x for x in t.turns if x.role == "assistant"]
    assert [(x.usage.input, x.usage.cached) for x in replies] == want
    assert all(x.time for x in replies) and replies[0].time != replies[-1].time
