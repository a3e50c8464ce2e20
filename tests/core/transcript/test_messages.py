"""Plain message lists: OpenAI-shaped, Anthropic-shaped, as an array, an object or JSONL."""

from __future__ import annotations

import json
from pathlib import Path

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.model import (
    CACHE_MISS,
    CLAIMS_DONE,
    EDITS_EXISTING_TEST,
    PROMPT_CHANGED,
    REASONING_ONLY,
    REASONING_RESENT,
    TOOL_ERROR,
    TRUNCATED,
    WRITES_TESTS,
)
from reviewui.core.transcript.normalize import usage_from
from tests.core.transcript.helpers import FIXTURES


def test_cache_miss_after_system_prompt_prefix_changes() -> None:
    t = load_transcript(FIXTURES / "openai_prefix_change.jsonl")
    assert t.format == "openai" and len(t.turns) == 12  # one turn per message
    changed = t.turns[7]
    assert changed.role == "assistant"
    assert PROMPT_CHANGED in changed.flags and CACHE_MISS in changed.flags
    # The calls before it shared one system prompt and hit the cache: neither flag there.
    assert not {PROMPT_CHANGED, CACHE_MISS} & set(t.turns[4].flags)
    # After the change the prefix is stable again: the cache hits, no flags.
    assert not {PROMPT_CHANGED, CACHE_MISS} & set(t.turns[9].flags)
    assert t.cumulative_input()[-1] == 3000 + 3300 + 3600 + 3900 + 4000


def test_truncated_reasoning_only_turn_is_resent() -> None:
    t = load_transcript(FIXTURES / "openai_prefix_change.jsonl")
    cut = t.turns[7]
    assert cut.stop == "max_tokens"
    assert {TRUNCATED, REASONING_ONLY, REASONING_RESENT} <= set(cut.flags)
    assert cut.reasoning_chars == len("A long deliberation about Option handling, " * 40)
    assert cut.usage.reasoning == 8192
    assert CLAIMS_DONE not in cut.flags


def test_inline_think_tags_become_reasoning() -> None:
    t = load_transcript(FIXTURES / "openai_prefix_change.jsonl")
    turn = t.turns[4]
    assert turn.text == "Checking the tests."
    assert turn.reasoning == "The unwrap panics on None."


def test_editor_tool_edit_of_an_existing_test_and_final_claim() -> None:
    t = load_transcript(FIXTURES / "openai_prefix_change.jsonl")
    edit = t.turns[9]
    assert edit.tool_calls[0].kind == "edit"
    assert edit.tool_calls[0].arguments["old_str"] == "assert_eq!(write(None), 0);"  # arguments are parsed JSON
    assert {WRITES_TESTS, EDITS_EXISTING_TEST} <= set(edit.flags)
    assert t.last_claim() is t.turns[11]


def test_anthropic_list_with_system_thinking_and_failed_edit() -> None:
    t = load_transcript(FIXTURES / "anthropic_messages.json")
    assert t.format == "anthropic"
    assert [x.role for x in t.turns] == ["system", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]
    view = t.turns[2]
    assert view.tool_calls[0].kind == "read" and view.usage.input == 10 + 2000 + 0
    cut = t.turns[4]
    assert cut.stop == "max_tokens" and {TRUNCATED, REASONING_ONLY} <= set(cut.flags)
    failed = t.turns[6]
    assert REASONING_RESENT in failed.flags  # redacted thinking still goes back with the tool call
    assert failed.edits == () and WRITES_TESTS in failed.flags and EDITS_EXISTING_TEST not in failed.flags
    assert TOOL_ERROR in t.turns[7].flags
    assert CLAIMS_DONE in t.turns[8].flags and "Action: done" in t.turns[8].text


def test_array_object_and_jsonl_forms_load_alike(tmp_path: Path) -> None:
    lines = (FIXTURES / "openai_prefix_change.jsonl").read_text().splitlines()
    messages = [json.loads(x) for x in lines]
    (tmp_path / "a.json").write_text(json.dumps(messages, indent=2))
    (tmp_path / "o.json").write_text(json.dumps({"messages": messages}))
    jl = load_transcript(FIXTURES / "openai_prefix_change.jsonl").to_json()
    assert load_transcript(tmp_path / "a.json").to_json() == jl
    assert load_transcript(tmp_path / "o.json").to_json() == jl


def test_jsonl_of_chat_completion_responses(tmp_path: Path) -> None:
    resp = {"id": "r", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "length",
            "message": {"role": "assistant", "content": "partial answ"}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 40}}}
    p = tmp_path / "calls.jsonl"
    p.write_text(json.dumps({"role": "user", "content": "hi"}) + "\n" + json.dumps(resp) + "\n")
    t = load_transcript(p)
    assert [x.role for x in t.turns] == ["user", "assistant"]
    assert t.turns[1].stop == "max_tokens" and TRUNCATED in t.turns[1].flags
    assert (t.turns[1].usage.input, t.turns[1].usage.cached) == (50, 40)


def test_usage_conventions_of_each_provider() -> None:
    # Anthropic: input_tokens excludes the cache; the prompt is the sum.
    u = usage_from({"input_tokens": 5, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 900, "output_tokens": 7})
    assert (u.input, u.cached, u.output) == (1005, 900, 7)
    # OpenAI: prompt_tokens includes the cached part.
    u = usage_from({"prompt_tokens": 1000, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 600},
                    "completion_tokens_details": {"reasoning_tokens": 4}})
    assert (u.input, u.cached, u.output, u.reasoning) == (1000, 600, 9, 4)
    # DeepSeek: cache hits reported separately.
    u = usage_from({"prompt_tokens": 800, "completion_tokens": 1, "prompt_cache_hit_tokens": 700, "prompt_cache_miss_tokens": 100})
    assert (u.input, u.cached) == (800, 700)
    # LiteLLM passing Anthropic's cache fields through, prompt_tokens already including them.
    u = usage_from({"prompt_tokens": 4646, "completion_tokens": 1, "cache_creation_input_tokens": 1158, "cache_read_input_tokens": 3482})
    assert (u.input, u.cached) == (4646, 3482)
    # …and a LiteLLM version whose prompt_tokens leaves them out.
    u = usage_from({"prompt_tokens": 6, "completion_tokens": 1, "cache_creation_input_tokens": 1158, "cache_read_input_tokens": 3482})
    assert (u.input, u.cached) == (6 + 1158 + 3482, 3482)
    # Codex: input_tokens includes cached_input_tokens.
    u = usage_from({"input_tokens": 500, "cached_input_tokens": 400, "output_tokens": 3, "reasoning_output_tokens": 2})
    assert (u.input, u.cached, u.output, u.reasoning) == (500, 400, 3, 2)
    # OpenHands V1 token usage records.
    u = usage_from({"prompt_tokens": 3869, "completion_tokens": 32, "cache_read_tokens": 3712, "reasoning_tokens": 0})
    assert (u.input, u.cached) == (3869, 3712)
    assert usage_from("nope") is None and usage_from({"something": 1}) is None
    # Garbage numbers never go negative or non-integer.
    u = usage_from({"input_tokens": -5, "cache_read_input_tokens": "9", "output_tokens": True})
    assert (u.input, u.cached, u.output) == (0, 0, 0)


def test_mini_swe_agent_fenced_actions_and_exit_message(tmp_path: Path) -> None:
    doc = {"trajectory_format": "mini-swe-agent-1.1", "info": {"exit_status": "Submitted"}, "messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": "THOUGHT: patch it\n\n```mswea_bash_command\nsed -i 's/x/y/' src/a.py\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
        {"role": "assistant", "content": "```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"},
        {"role": "exit", "content": "", "extra": {"exit_status": "Submitted"}},
    ]}
    p = tmp_path / "run.traj.json"
    p.write_text(json.dumps(doc))
    t = load_transcript(p)
    assert t.format == "mini-swe-agent"
    assert [x.role for x in t.turns] == ["system", "user", "assistant", "tool", "assistant", "system"]
    assert t.turns[2].files_written == ("src/a.py",)
    assert t.turns[4].tool_calls[0].kind == "finish" and t.last_claim() is t.turns[4]


def test_cache_share_drop_after_the_context_shrank_is_not_a_miss(tmp_path: Path) -> None:
    """A compacted context re-primes the cache: expected, and flagged as compaction elsewhere."""
    def call(prompt: int, cached: int) -> dict:
        return {"role": "assistant", "content": "step", "tool_calls": [{"id": f"c{prompt}", "function": {"name": "bash", "arguments": "{}"}}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": cached}}}
    msgs = [{"role": "user", "content": "go"}, call(100_000, 99_000), call(20_000, 1_000), call(21_000, 20_000), call(22_000, 2_000)]
    p = tmp_path / "m.json"
    p.write_text(json.dumps(msgs))
    t = load_transcript(p)
    assert [CACHE_MISS in x.flags for x in t.turns] == [False, False, False, False, True]
