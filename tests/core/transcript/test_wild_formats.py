"""Formats found in the wild, on real files: Claude Code subagents, OpenHands resolver output, Aider, Inspect AI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.model import CLAIMS_DONE, TOOL_ERROR, WRITES_TESTS
from tests.core.transcript.helpers import FIXTURES, REPO

CC_AGENT = FIXTURES / "claude-code" / "agent-aac57f5.jsonl"
CC_TASK = FIXTURES / "claude-code" / "session_task_subagent_lines35-57.jsonl"
RESOLVER = FIXTURES / "openhands" / "resolver_output.jsonl"
AIDER = FIXTURES / "aider" / "aider_chat_history_session_2024-08-06_08-55-14.md"
INSPECT_EVAL = FIXTURES / "inspect-ai" / "log_message_deduplication.eval"
INSPECT_JSON = FIXTURES / "inspect-ai" / "log_tool_call_error.json"
TASK_ID = "toolu_01Cz2Pnv7qNcnK1ZiocxWhQX"


def _lines(path):
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


# --- Claude Code subagents ---------------------------------------------------


def test_a_subagent_file_loads_as_its_own_transcript() -> None:
    lines = _lines(CC_AGENT)
    assert all(d["isSidechain"] for d in lines)  # the file really is all sidechain
    t = load_transcript(CC_AGENT)
    users = sum(1 for d in lines if d["type"] == "user")
    ids = {d["message"]["id"] for d in lines if d["type"] == "assistant"}
    assert t.format == "claude-code" and len(t.turns) == users + len(ids)
    assert t.turns[0].role == "user" and t.turns[0].text.startswith("Search hex.pm")
    assert sum(len(x.tool_calls) for x in t.turns) == 12  # 6 WebSearch + 6 WebFetch
    assert all(x.group is None for x in t.turns)


def test_subagent_turns_in_a_session_are_grouped_under_their_task_call() -> None:
    t = load_transcript(CC_TASK)
    task_turn = t.turns[0]
    assert [c.name for c in task_turn.tool_calls] == ["Task"] and task_turn.tool_calls[0].id == TASK_ID
    grouped = [x for x in t.turns if x.group == TASK_ID]
    progress = [d for d in _lines(CC_TASK) if d.get("type") == "progress" and d["data"].get("type") == "agent_progress"]
    inner_ids = {d["data"]["message"]["message"].get("id") for d in progress if d["data"]["message"]["type"] == "assistant"}
    assert len([x for x in grouped if x.role == "assistant"]) == len(inner_ids)
    assert grouped[0].role == "user" and grouped[0].text.startswith("Draft bead content")
    # The subagent's turns sit between the Task call and its result, and the main run resumes after.
    first, last = grouped[0].index, grouped[-1].index
    assert all(x.group == TASK_ID for x in t.turns[first - 1 : last])
    assert t.turns[last].role == "tool" and t.turns[last].group is None
    assert t.turns[-1].role == "assistant" and t.turns[-1].group is None
    # A subagent on another model is not a change of the main run's prompt.
    assert not t.turns[-1].has("prompt-changed")


# --- OpenHands resolver output -------------------------------------------------


def test_resolver_output_loads_the_first_run_by_default() -> None:
    t = load_transcript(RESOLVER)
    assert t.format == "openhands"
    history = json.loads(RESOLVER.read_text().splitlines()[0])["history"]
    assert len(t.turns) == len(history)
    assert t.turns[0].role == "user" and "MIT license" in t.turns[0].text
    assert t.turns[-1].has(CLAIMS_DONE) and t.turns[-1].tool_calls[0].kind == "finish"
    assert any("instance 5, one of 2 runs" in n for n in t.notes)


def test_resolver_instance_by_id_and_by_the_branch_patch() -> None:
    second = json.loads(RESOLVER.read_text().splitlines()[1])
    by_id = load_transcript(RESOLVER, instance="1")
    assert len(by_id.turns) == len(second["history"]) and "dark mode" in by_id.turns[0].text
    by_patch = load_transcript(RESOLVER, branch_files=["src/PullRequestViewer.tsx"])
    assert [x.text for x in by_patch.turns] == [x.text for x in by_id.turns]
    assert any("its patch matches the branch" in n for n in by_patch.notes)
    with pytest.raises(ReviewError, match="no instance '9'.*5, 1"):
        load_transcript(RESOLVER, instance="9")


def test_forcing_openhands_on_resolver_output_works() -> None:
    assert len(load_transcript(RESOLVER, "openhands").turns) == len(load_transcript(RESOLVER).turns)


def test_headless_instance_flag() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "reviewui", "transcript", str(RESOLVER), "--instance", "1", "--format", "json"],
        capture_output=True, text=True, cwd=REPO,
    )
    assert r.returncode == 0, r.stderr
    assert "dark mode" in json.loads(r.stdout)["turns"][0]["text"]


# --- Aider ---------------------------------------------------------------------


def test_aider_turns_edits_and_failed_blocks() -> None:
    t = load_transcript(AIDER)
    text = AIDER.read_text()
    assert t.format == "aider"
    # Issue 28: answers to Aider's questions ("Attempt to fix lint errors? n") are user turns of their own kind.
    users = [x for x in t.turns if x.role == "user" and x.kind is None]
    user_lines = [ln for ln in text.splitlines() if ln.startswith("#### ")]
    assert len(users) == len(user_lines)  # here every user message is one line
    assert users[0].text.startswith("add tests for --map-tokens")
    blocks = text.count("<<<<<<< SEARCH\n")  # SEARCH lines of the model, not the quoted ones in `> ` output
    calls = [c for x in t.turns for c in x.tool_calls]
    # Issue 28: the blocks of a reply cut off by `^C` are calls but not edits (kind `other`, a note says why).
    assert len(calls) == blocks and all(c.paths for c in calls)
    assert all(c.kind == ("other" if x.note else "edit") for x in t.turns for c in x.tool_calls)
    assert [x.index for x in t.turns if x.note and "interrupted" in x.note] == [8, 20, 49]
    first = next(x for x in t.turns if x.role == "assistant")
    assert first.files_written == ("tests/basic/test_main.py",) and first.has(WRITES_TESTS)
    assert first.usage.input == 7373 and first.usage.output == 764
    # "SearchReplaceNoExactMatch … in tests/basic/test_main.py" and no "Applied edit": nothing written.
    failed = [x for x in t.turns if x.role == "tool" and "failed to exactly match" in x.text]
    assert failed and all(x.has(TOOL_ERROR) for x in failed)
    for f in failed:
        reply = t.turn(f.index - 1)
        assert reply.role == "assistant" and reply.tool_calls and reply.files_written == ()


def test_aider_sessions_pick_with_instance(tmp_path) -> None:
    p = tmp_path / ".aider.chat.history.md"
    body = AIDER.read_text()
    p.write_text(body + "\n" + body.replace("2024-08-06 08:55:14", "2024-08-07 09:00:00"))
    both = load_transcript(p)
    one = load_transcript(p, instance="2")
    assert len(both.turns) == 2 * len(one.turns) and one.turns[0].text.endswith("2024-08-07 09:00:00")
    with pytest.raises(ReviewError, match="no session '3'"):
        load_transcript(p, instance="3")


# --- Inspect AI ------------------------------------------------------------------


def test_inspect_eval_zip_sample_messages_tool_calls_and_score() -> None:
    t = load_transcript(INSPECT_EVAL)
    assert t.format == "inspect-ai"
    roles = [x.role for x in t.turns]
    assert roles == ["user"] + ["assistant", "tool"] * 5 + ["assistant", "system"]
    calls = [c for x in t.turns for c in x.tool_calls]
    assert [(c.name, c.kind, c.arguments) for c in calls] == [("bash", "shell", {"cmd": "ls"})] * 5
    assert t.turns[2].text.startswith("bin\nboot")
    assert t.turns[-2].text == "done" and t.turns[-2].has(CLAIMS_DONE)
    assert t.turns[-1].text.startswith("score closeness_log: 0.0")


def test_inspect_json_log_tool_errors() -> None:
    t = load_transcript(INSPECT_JSON)
    assert t.format == "inspect-ai" and len(t.turns) == 11
    assert all(x.role == "tool" and x.has(TOOL_ERROR) for x in t.turns)
    with pytest.raises(ReviewError, match="no sample"):
        load_transcript(INSPECT_JSON, instance="7")


# --- Codex exec --json --------------------------------------------------------------

CODEX_EXEC = FIXTURES / "codex" / "exec_json_issue-119_test_scenario_lines1-5_28-37.jsonl"


def test_codex_exec_json_stream_loads_with_commands_file_changes_and_the_answer() -> None:
    lines = _lines(CODEX_EXEC)
    t = load_transcript(CODEX_EXEC)
    assert t.format == "codex" and t.skipped_lines == 0
    completed = [d["item"] for d in lines if d["type"] == "item.completed" and d["item"]["type"] != "todo_list"]
    commands = [i for i in completed if i["type"] == "command_execution"]
    calls = [c for x in t.turns for c in x.tool_calls]
    assert [c.kind for c in calls] == ["shell", "shell", "edit", "shell"]
    assert calls[0].arguments["command"] == "cat .ai-workflow/issue-119/00_planning/output/planning.md"  # unwrapped
    assert sum(1 for x in t.turns if x.role == "tool") == len(commands) + 1
    [change] = [i for i in completed if i["type"] == "file_change"]
    writer = next(x for x in t.turns if x.files_written)
    assert writer.files_written == (change["changes"][0]["path"],) and writer.edits[0].operation == "create"
    final = t.turns[-1]
    usage = lines[-1]["usage"]
    assert final.role == "assistant" and final.text.startswith("Produced the Phase 3 test scenario")
    assert final.has(CLAIMS_DONE) and (final.usage.input, final.usage.cached) == (usage["input_tokens"], usage["cached_input_tokens"])
