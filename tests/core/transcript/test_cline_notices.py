"""Cline's API-retry and error notices are not prompts: no false `prompt-changed` (issue 42).

The UI log of a real Cline task (fineye, records 125..190) holds a request
that failed and was retried again and again: `error_retry` says
`{"attempt": N, "maxAttempts": 3, "delaySeconds": D}` each time, then
`api_req_failed`, `api_req_retried`, a resumed task and two more requests
that answered. Those notices became system turns whose first lines differ
only in their numbers, which the per-turn-metadata rule read as a prompt
whose head changes every request. They are notices of the harness, never
sent to the model: no turn is `prompt-changed`, while the reply whose cache
reads really fell to zero keeps its `cache-miss`.
"""

from __future__ import annotations

import json

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.builder import Run
from reviewui.core.transcript.flags import finalize
from reviewui.core.transcript.model import CACHE_MISS, PROMPT_CHANGED
from tests.core.transcript.helpers import FIXTURES

RETRIES = FIXTURES / "cline" / "fineye_ui_messages_entries125-190.json"


def test_retry_and_error_notices_between_requests_raise_no_prompt_changed() -> None:
    records = json.loads(RETRIES.read_text())
    notices = [r for r in records if r.get("say") in ("error_retry", "error") or r.get("ask") == "api_req_failed"]
    assert len(notices) >= 10 and any(r.get("say") == "api_req_retried" for r in records)
    t = load_transcript(RETRIES)
    assert t.format == "cline"
    systems = [x for x in t.turns if x.role == "system"]
    assert [x.text.split(":", 1)[0] for x in systems] == [r.get("say") or r.get("ask") for r in notices]
    assert not [x.index for x in t.turns if x.has(PROMPT_CHANGED)]
    # The requests that answered: usage from their api_req_started JSON; the request text is no turn's.
    started = [json.loads(r["text"]) for r in records if r.get("say") == "api_req_started" and "tokensIn" in r["text"]]
    answered = [s for s in started if s.get("tokensOut")]
    replies = [x for x in t.turns if x.role == "assistant"]
    assert [x.usage.output for x in replies] == [s["tokensOut"] for s in answered]
    assert not any(s["request"][:40] in x.text for x in t.turns for s in started)
    # The one real cache miss (cache reads back to 0 after ~51k) is still flagged, and only it.
    assert [x.usage.cached for x in replies if x.has(CACHE_MISS)] == [0]
    assert [x.text for x in t.turns if x.role == "user"] == [
        r["text"] for r in records if r.get("say") == "user_feedback"]


def test_a_notice_is_not_a_prompt_but_the_same_text_as_a_prompt_is() -> None:
    def run(notice: bool) -> Run:
        r = Run()
        for n in (1, 2, 3):
            if notice:
                r.notice(f'error_retry: {{"attempt":{n},"maxAttempts":3}}', n)
            else:
                r.new("user", n).add_text(f'error_retry: {{"attempt":{n},"maxAttempts":3}}')
        return r

    assert not any(x.has(PROMPT_CHANGED) for x in finalize(run(True), "cline", "x", 0).turns)
    assert [x.has(PROMPT_CHANGED) for x in finalize(run(False), "openai", "x", 0).turns] == [False, True, True]
