"""Every real transcript in ../shared/transcripts loads with the right format and the right number of turns.

Turn counts are checked against counts made here with simple, independent
rules (distinct message ids, message-list lengths, event files), never by
asking the loader. The folder sits beside the repository; when it is absent
(a bare checkout) these tests skip with that reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewui.core.transcript import detect_format, load_transcript
from reviewui.core.transcript.model import (
    CLAIMS_DONE,
    EDITS_EXISTING_TEST,
    REASONING_RESENT,
    TOOL_ERROR,
    WRITES_TESTS,
)
from tests.core.transcript.helpers import SAMPLES

pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"sample transcripts not found at {SAMPLES}")

CC = "claude-code"
CC_TOOLS = "claude-code/cc2.1.38_tool_heavy.jsonl"
CC_EDITS = "claude-code/cc2.1.x_session_8463c716_lines139-188_test_edits.jsonl"
CODEX_BIG = "codex-rollout/rollout-2026-02-23T12-40-23-019c8a4c_prefix495lines.jsonl"
CODEX_SMALL = "codex-rollout/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
MINI_DS = "mini-swe-agent/deepseek-reasoner_pvlib-1606.traj.json"
MINI_OLD = "mini-swe-agent/upstream_test_github_issue.traj.json"
OA_LIST = "openai-chat/openhands_fncall_message_list_claude-sonnet-4.json"
OA_LOG = "openai-chat/openhands_llmlog_deepseek-chat_call1.json"
OH_V0 = "openhands/v0_traj_basic_claude35_str_replace_editor.json"
OH_V1 = "openhands/v1_sdk_conversation_cd94562403b9487ebdd4018e3f531dfd"
SWE_FC = "swe-agent-traj/demo_function_calling_simple.traj"
SWE_OLD = "swe-agent-traj/gpt4_legacy_testrepo_i1.traj"


# --- independent turn counts --------------------------------------------------


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def count_claude_code(path: Path) -> int:
    """User lines (not meta) + distinct assistant message ids + compaction boundaries."""
    users = ids = boundaries = 0
    seen: set[str] = set()
    for d in _jsonl(path):
        if d.get("isSidechain"):
            continue
        if d["type"] == "user" and not d.get("isMeta"):
            users += 1
        elif d["type"] == "assistant" and d["message"]["id"] not in seen:
            seen.add(d["message"]["id"])
            ids += 1
        elif d["type"] == "system" and d.get("subtype") == "compact_boundary":
            boundaries += 1
    return users + ids + boundaries


ASSISTANT_ITEMS = {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}


def count_codex(path: Path) -> int:
    """Input messages and tool outputs count one each; a model call's items count once.

    A model call's items are the assistant-side response items between two
    model-call boundaries: an input item, or a token_count report.
    """
    total = 0
    in_call = False
    for d in _jsonl(path):
        p = d.get("payload", {})
        if d["type"] == "event_msg" and p.get("type") == "token_count" and p.get("info"):
            in_call = False
        if d["type"] != "response_item":
            continue
        assistant_side = p["type"] in ASSISTANT_ITEMS or (p["type"] == "message" and p["role"] == "assistant")
        if assistant_side:
            if not in_call:
                total += 1
                in_call = True
        else:
            total += 1
            in_call = False
    return total


def count_messages(path: Path) -> int:
    doc = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(doc, list):
        return len(doc)
    return len(doc["messages"]) + (1 if isinstance(doc.get("response"), dict) else 0)


def count_swe_agent(path: Path) -> int:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return sum(1 for h in doc["history"] if not h.get("is_demo"))


def count_openhands_v0(path: Path) -> int:
    doc = json.loads(path.read_text(encoding="utf-8"))
    skip_obs = {"agent_state_changed", "null"}
    return sum(1 for e in doc if e.get("observation") not in skip_obs and e.get("action") != "change_agent_state")


def count_openhands_v1(folder: Path) -> int:
    return len(list((folder / "events").glob("event-*.json")))


CASES = [
    (CC_TOOLS, CC, count_claude_code),
    (CC_EDITS, CC, count_claude_code),
    (CODEX_BIG, "codex", count_codex),
    (CODEX_SMALL, "codex", count_codex),
    (MINI_DS, "mini-swe-agent", count_messages),
    (MINI_OLD, "mini-swe-agent", count_messages),
    (OA_LIST, "openai", count_messages),
    (OA_LOG, "openai", count_messages),
    (OH_V0, "openhands", count_openhands_v0),
    (OH_V1, "openhands", count_openhands_v1),
    (SWE_FC, "swe-agent", count_swe_agent),
    (SWE_OLD, "swe-agent", count_swe_agent),
]


def test_every_required_sample_is_covered() -> None:
    """No sample in a required format is left out of the table below."""
    listed = {SAMPLES / rel for rel, _, _ in CASES}
    found = {
        p
        for p in SAMPLES.glob("*/*")
        if p.parent.name != "aider" and p.name != "SOURCE.txt" and (p.is_dir() or p.suffix != ".md")
    }
    assert found == listed


@pytest.mark.parametrize(("rel", "fmt", "count"), CASES, ids=[c[0].split("/")[-1][:40] for c in CASES])
def test_sample_loads_with_format_and_turn_count(rel: str, fmt: str, count) -> None:
    path = SAMPLES / rel
    t = load_transcript(path)
    assert t.format == fmt
    assert detect_format(path) == fmt
    assert t.skipped_lines == 0
    assert len(t.turns) == count(path)
    assert [turn.index for turn in t.turns] == list(range(1, len(t.turns) + 1))
    json.dumps(t.to_json())  # the contract object is plain JSON


def test_claude_code_excerpt_splits_additive_test_edit_from_assertion_rewrite() -> None:
    """The excerpt adds a describe block (additive), then rewrites two assertions of that same block.

    Issue 17: the rewritten assertions are lines the run itself added two turns
    earlier (each Edit's old_string lies inside the first Edit's new_string), so
    the rewrite writes tests but does not edit an existing test.
    """
    t = load_transcript(SAMPLES / CC_EDITS)
    edits = [turn for turn in t.turns if turn.edits]
    additive, rewrite = [e for e in edits if "test" in e.edits[0].path]
    assert WRITES_TESTS in additive.flags and EDITS_EXISTING_TEST not in additive.flags
    assert all(e.old and e.old in (additive.edits[0].new or "") for e in rewrite.edits)
    assert WRITES_TESTS in rewrite.flags and EDITS_EXISTING_TEST not in rewrite.flags
    assert len(rewrite.tool_calls) == 2  # two Edit lines of one message are one turn
    # The excerpt starts mid-session (its first parent id points outside it): no user turn, no task.
    assert t.turns[0].role == "tool"
    assert t.task_text() is None


def test_claude_code_usage_is_counted_once_per_message() -> None:
    t = load_transcript(SAMPLES / CC_EDITS)
    last = t.turns[-1]
    # msg_012qT… spans two lines with output_tokens 19 then 404: the final snapshot, not the sum.
    assert last.usage.output == 404
    assert last.usage.input == 3 + 3722 + 113371
    assert last.usage.cached == 113371


def test_claude_code_groups_lines_of_one_message_around_a_tool_result() -> None:
    """msg_019BN… writes Read, then its result arrives, then WebFetch: still one turn."""
    t = load_transcript(SAMPLES / CC_TOOLS)
    names = [[c.name for c in turn.tool_calls] for turn in t.turns if turn.role == "assistant"]
    assert ["Read", "WebFetch"] in names
    assert t.task_text() == "start phoenix in background"


def test_codex_big_sample_final_answers_and_usage() -> None:
    t = load_transcript(SAMPLES / CODEX_BIG)
    claims = t.flagged(CLAIMS_DONE)
    assert len(claims) == 2 and all(c.stop == "end" and not c.tool_calls for c in claims)
    first_call = next(turn for turn in t.turns if turn.role == "assistant")
    assert (first_call.usage.input, first_call.usage.cached, first_call.usage.output) == (17203, 3456, 358)
    # token_count is written twice per call; the repeat must not shift usage onto the next call.
    second = [turn for turn in t.turns if turn.role == "assistant"][1]
    assert second.usage.input == 19243
    # Instructions sent as "user" messages are not the task: exactly the three typed prompts are.
    assert sum(1 for turn in t.turns if turn.role == "user") == 3
    assert t.task_text() == "[REDACTED_TEXT len=516 sha=05857781]"
    assert sum(1 for turn in t.turns if REASONING_RESENT in turn.flags) > 0


def test_mini_swe_agent_old_format_parses_text_actions() -> None:
    t = load_transcript(SAMPLES / MINI_OLD)
    last_claim = t.last_claim()
    assert last_claim is not None
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in last_claim.text
    written = [p for turn in t.turns for p in turn.files_written]
    assert written == ["tests/missing_colon.py", "tests/missing_colon.py"]  # sed -i, then cat > … <<EOF
    heredoc = [e for turn in t.turns for e in turn.edits if e.operation == "write"]
    assert heredoc and "raise ValueError" in (heredoc[0].new or "")
    assert [turn.index for turn in t.flagged(TOOL_ERROR)] == [4, 18]  # <returncode>1</returncode>


def test_mini_swe_agent_deepseek_reasoning_is_resent_and_usage_read_from_response() -> None:
    t = load_transcript(SAMPLES / MINI_DS)
    assistants = [turn for turn in t.turns if turn.role == "assistant"]
    assert all(a.reasoning_chars > 0 for a in assistants)
    assert [REASONING_RESENT in a.flags for a in assistants] == [True, True, True, False]
    assert (assistants[0].usage.input, assistants[0].usage.cached, assistants[0].usage.output) == (3394, 3392, 74)
    assert t.turns[-1].role == "system"  # the `exit` message


def test_openai_list_failed_create_writes_nothing() -> None:
    t = load_transcript(SAMPLES / OA_LIST)
    create = next(turn for turn in t.turns if any(c.kind == "write" for c in turn.tool_calls))
    assert create.edits == () and create.files_written == ()
    assert TOOL_ERROR in t.turns[create.index].flags  # its result: "Ran into [Errno 2] …"
    assert t.last_claim() is not None and t.last_claim().tool_calls[0].kind == "finish"


def test_openhands_v1_usage_joined_on_response_id() -> None:
    t = load_transcript(SAMPLES / OH_V1)
    assistants = [turn for turn in t.turns if turn.role == "assistant"]
    assert [a.usage.input for a in assistants] == [3778, 3869, 3936]
    assert [a.usage.cached for a in assistants] == [0, 3712, 3840]


def test_swe_agent_legacy_range_edit_targets_open_file() -> None:
    t = load_transcript(SAMPLES / SWE_OLD)
    edit = next(turn for turn in t.turns if turn.edits)
    assert edit.edits[0].path.endswith("tests/missing_colon.py")
    assert edit.edits[0].new == "def division(a: float, b: float) -> float:"
    assert t.task_text() is not None and "SyntaxError" in t.task_text()
