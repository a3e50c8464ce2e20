"""Done claims and tool calls as real runs write them: code is not a claim, text tool calls are calls,
a final submit or hand-back is a claim, a tool-set change is a prompt change, self-edited test lines are not existing tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.flags import claims_done_text
from reviewui.core.transcript.model import CLAIMS_DONE, EDITS_EXISTING_TEST, PROMPT_CHANGED
from tests.core.transcript.helpers import FIXTURES

AIDER_COMMENT = FIXTURES / "aider" / "aider_session_2024-08-09_08-07-07_code_comment.md"
AIDER = FIXTURES / "aider" / "aider_chat_history_session_2024-08-06_08-55-14.md"
AIDER_BASE = FIXTURES / "aider" / "base_04fff71_tests_basic_test_main.py.txt"
NONFNCALL = FIXTURES / "openai" / "nonfncall_llmlog_deepseek-chat_call4.json"
SWE_LEGACY = FIXTURES / "swe-agent" / "gpt4_legacy_testrepo_i1.traj"
OH_GUI = FIXTURES / "openhands" / "basic_gui_mode.json"
OH_V1 = FIXTURES / "openhands" / "v1_sdk_conversation_cd94562403b9487ebdd4018e3f531dfd"


def test_a_done_phrase_in_a_code_comment_is_not_a_claim() -> None:
    t = load_transcript(AIDER_COMMENT)
    [reply] = [x for x in t.turns if x.role == "assistant"]
    assert "# Check if a file with the same name already exists in the chat" in reply.text
    assert not reply.has(CLAIMS_DONE)
    assert reply.files_written == ("aider/commands.py",)  # the <source> fence does not hide the file name


def test_prose_claims_still_count_and_code_ones_do_not() -> None:
    assert claims_done_text("All tests pass. The fix is complete.")
    assert not claims_done_text("```python\n# the task is complete\n```")
    assert not claims_done_text('The user said "the task is complete" but it is not.')
    assert not claims_done_text("> The implementation is done\nLet me check.")
    assert not claims_done_text("Run `echo task is done` next")


def test_tool_calls_written_as_text_are_tool_calls() -> None:
    t = load_transcript(NONFNCALL)
    assistants = [x for x in t.turns if x.role == "assistant"]
    assert [c.name for x in assistants for c in x.tool_calls] == ["terminal", "str_replace_editor", "terminal", "finish"]
    first = assistants[0].tool_calls[0]
    assert first.kind == "shell" and first.arguments["command"] == "pwd && ls -la"
    # The text calls' answers are tool turns, and a turn that calls a tool is no final answer.
    assert [x.role for x in t.turns[2:8]] == ["assistant", "tool"] * 3
    assert not assistants[0].has(CLAIMS_DONE) and not assistants[1].has(CLAIMS_DONE)
    assert assistants[-1].has(CLAIMS_DONE)  # the finish call


def test_submit_only_in_the_trajectory_ends_the_run(tmp_path: Path) -> None:
    doc = json.loads(SWE_LEGACY.read_text())
    assert doc["history"][-1]["action"].strip() == "submit" and doc["trajectory"][-1]["action"].strip() == "submit"
    doc["history"] = doc["history"][:-1]  # cut: the history stops before the submit
    p = tmp_path / "cut.traj"
    p.write_text(json.dumps(doc))
    t = load_transcript(p)
    last = [x for x in t.turns if x.role == "assistant"][-1]
    assert [c.name for c in last.tool_calls] == ["submit"] and last.has(CLAIMS_DONE)
    assert t.last_claim() is last
    whole = load_transcript(SWE_LEGACY)
    assert sum(c.name == "submit" for x in whole.turns for c in x.tool_calls) == 1  # not added twice


def test_openhands_final_message_before_awaiting_user_input_is_a_claim() -> None:
    events = json.loads(OH_GUI.read_text())
    assert events[-1]["extras"]["agent_state"] == "awaiting_user_input" and events[-3]["action"] == "message"
    t = load_transcript(OH_GUI)
    assert t.turns[-1].role == "assistant" and t.turns[-1].text.startswith("I've created a complete Vue.js")
    assert t.turns[-1].has(CLAIMS_DONE) and t.last_claim() is t.turns[-1]
    assert not any(x.has(CLAIMS_DONE) for x in t.turns[:-1])


def _v1_with_second_system_prompt(tmp_path: Path, tools_cut: int) -> Path:
    conv = tmp_path / "conv"
    shutil.copytree(OH_V1, conv)
    events = sorted((conv / "events").glob("event-*.json"))
    first = json.loads(events[0].read_text())
    assert first["kind"] == "SystemPromptEvent" and len(first["tools"]) == 3
    # The run's own system prompt sent again before the last event, with `tools_cut` tools cut from its tool set.
    again = dict(first, id="again", tools=first["tools"][: len(first["tools"]) - tools_cut])
    (conv / "events" / (events[-1].stem.replace("event-00007", "event-00006b") + ".json")).write_text(json.dumps(again))
    return conv


def test_a_tool_set_change_alone_flags_prompt_changed(tmp_path: Path) -> None:
    same = load_transcript(_v1_with_second_system_prompt(tmp_path / "a", 0))
    cut = load_transcript(_v1_with_second_system_prompt(tmp_path / "b", 1))
    assert not any(x.has(PROMPT_CHANGED) for x in same.turns)
    changed = [x for x in cut.turns if x.has(PROMPT_CHANGED)]
    assert len(changed) == 1 and changed[0].role == "assistant"


def test_edits_to_test_lines_the_run_wrote_are_not_edits_of_existing_tests() -> None:
    base = AIDER_BASE.read_text()
    plain = load_transcript(AIDER)
    based = load_transcript(AIDER, base_file=lambda p: base if p == "tests/basic/test_main.py" else None)
    # Turn 59 adds --yes to the two tests turn 54 wrote: lines the base commit does not have. (Turns 57 and 52
    # before issue 28 made the two "Attempt to fix lint errors? n" answers user turns of their own.)
    assert "--yes" in plain.turn(59).text and plain.turn(59).has(EDITS_EXISTING_TEST)
    assert not based.turn(59).has(EDITS_EXISTING_TEST)
    # Turn 8 would drop --no-git from tests that were there before the run, but it was interrupted (`^C`,
    # its last SEARCH block cut off, no "Applied edit"): issue 28 says it edited nothing, so no flag rests on it.
    assert not based.turn(8).has(EDITS_EXISTING_TEST) and not based.turn(8).edits
    assert based.turn(8).note is not None and "interrupted" in based.turn(8).note


def test_rewriting_assertions_the_run_added_earlier_is_not_editing_an_existing_test() -> None:
    # Claude Code excerpt: turn 8 adds a describe block to a test file, turn 10 rewrites two of its assertions.
    t = load_transcript(FIXTURES / "claude-code" / "cc2.1.x_session_8463c716_lines139-188_test_edits.jsonl")
    added, rewrite = t.turn(8), t.turn(10)
    assert all(e.old and e.old in (added.edits[0].new or "") for e in rewrite.edits)
    assert rewrite.has("writes-tests") and not rewrite.has(EDITS_EXISTING_TEST)
