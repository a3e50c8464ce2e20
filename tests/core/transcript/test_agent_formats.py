"""Cline and Copilot CLI on their real samples, and every detector fed every real sample (issue 28).

Expected counts come from the files themselves, read here with simple rules
independent of the loaders (how many `[tool …] Result:` blocks, how many
`tool.execution_complete` lines, the numbers in the records).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.detect import sniff
from reviewui.core.transcript.formats import FORMAT_LIST
from reviewui.core.transcript.timestamps import iso_time
from tests.core.transcript.helpers import FIXTURES

CLINE = FIXTURES / "cline"
API = CLINE / "MRA04242026_api_conversation_history_msgs1-43.json"
UI_MCP = CLINE / "mcp-vscode-server_ui_messages_entries1-142.json"
UI_FINEYE = CLINE / "fineye_ui_messages_entries1-60.json"
COPILOT = FIXTURES / "copilot-cli"
CP_MEDIUM = COPILOT / "session-medium_events_without_system_message.jsonl"
CP_DEMO = COPILOT / "session-demo_events_subagent_tail.jsonl"

FOLDER_FORMAT = {
    "aider": "aider", "claude-code": "claude-code", "cline": "cline", "codex": "codex", "copilot-cli": "copilot-cli",
    "gemini-cli": "gemini-cli", "inspect-ai": "inspect-ai", "mini-swe-agent": "mini-swe-agent", "openai": "openai",
    "openhands": "openhands", "opencode": "opencode", "qwen-code": "qwen-code", "cursor": "cursor",
    "copilot-chat": "copilot-chat",
    "swe-agent": "swe-agent",
}


def real_samples() -> list[tuple[Path, str]]:
    """Every real sample under a folder with a SOURCE manifest, with the format its folder names."""
    out = []
    for folder, fmt in FOLDER_FORMAT.items():
        d = FIXTURES / folder
        assert (d / "SOURCE.txt").is_file(), folder
        for p in sorted(d.iterdir()):
            if p.name.endswith((".txt", ".aider.input.history")):
                continue
            out.append((p, fmt))
    return out


@pytest.mark.parametrize(("path", "fmt"), real_samples(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_every_detector_sees_each_real_sample_and_only_its_own_claims_it(path: Path, fmt: str) -> None:
    s = sniff(path)
    claims = [f.name for f in FORMAT_LIST if f.detect(s)]
    assert claims == [fmt], (path.name, claims)


def _api() -> list[dict]:
    return json.loads(API.read_text())


def test_cline_history_tool_results_are_tool_turns_not_user_turns() -> None:
    msgs = _api()
    results = sum(
        1 for m in msgs if m["role"] == "user" for b in m["content"]
        if b.get("type") == "text" and re.match(r"\[[a-z_]+( for '.*?')?\] Result:", b["text"], re.S)
    )
    calls = sum(1 for m in msgs if m["role"] == "assistant" for b in m["content"] if b.get("type") == "tool_use")
    t = load_transcript(API)
    assert t.format == "cline"
    tools = [x for x in t.turns if x.role == "tool"]
    assert len(tools) == results and results > 20
    assert sum(len(x.tool_calls) for x in t.turns) == calls
    users = [x for x in t.turns if x.role == "user"]
    assert not any("] Result:" in x.text[:200] or x.text.startswith("<environment_details>") for x in users)
    assert users[0].text.startswith("<task>")


def test_cline_replace_in_file_and_write_to_file_are_edits_with_old_and_new() -> None:
    msgs = _api()
    diffs = [b["input"]["diff"] for m in msgs if m["role"] == "assistant" for b in m["content"]
             if b.get("type") == "tool_use" and b["name"] == "replace_in_file"]
    blocks = sum(d.count("------- SEARCH") for d in diffs)
    t = load_transcript(API)
    edits = [e for x in t.turns for e in x.edits]
    replaces = [e for e in edits if e.operation == "replace"]
    assert len(replaces) == blocks and blocks >= 4
    first = diffs[0].split("------- SEARCH\n", 1)[1]
    old, new = first.split("\n=======\n", 1)
    assert replaces[0].old == old and replaces[0].new == new.split("\n+++++++ REPLACE", 1)[0]
    writes = [e for e in edits if e.operation == "write"]
    assert len(writes) == 2 and all(e.new and len(e.new) > 1000 for e in writes)
    data = t.to_json()
    contract = [e for turn in data["turns"] for e in turn["edits"]]
    assert contract[2] == {"file": replaces[0].path, "old": old, "new": replaces[0].new}


def test_cline_history_usage_time_and_failed_command() -> None:
    msgs = _api()
    t = load_transcript(API)
    replies = [x for x in t.turns if x.role == "assistant"]
    want = [m["metrics"]["tokens"] for m in msgs if m["role"] == "assistant"]
    assert [(x.usage.input, x.usage.output) for x in replies] == [
        (w["prompt"] + w["cached"], w["completion"]) for w in want
    ]
    assert t.turns[0].time == "2026-04-24T23:26:00.794Z"  # ts 1777073160794
    cmds = [c for x in t.turns for c in x.commands]
    failed = [c for c in cmds if c.exit == 1]
    assert failed and failed[0].output_head.startswith("Command failed with exit code 1.")
    whole = t.turn(failed[0].result_turn).text  # the whole output, where a test summary would sit
    assert whole.startswith(failed[0].output_head) and t.turn(failed[0].result_turn).role == "tool"
    assert any(x.role == "tool" and "tool-error" in x.flags for x in t.turns)


def test_cline_ui_messages_alone_commands_outputs_and_edits() -> None:
    ui = json.loads(UI_MCP.read_text())
    commands = [r["text"] for r in ui if r.get("say") == "command"]
    created = [json.loads(r["text"]) for r in ui if r.get("ask") == "tool"
               and json.loads(r["text"]).get("tool") == "newFileCreated"]
    t = load_transcript(UI_MCP)
    assert t.format == "cline"
    got = [c for x in t.turns for c in x.commands]
    assert [c.command for c in got] == commands
    first_out = next(r["text"] for r in ui if r.get("ask") == "command_output")
    assert got[0].output_head.startswith(first_out[:40])
    creates = [e for x in t.turns for e in x.edits if e.operation == "create"]
    assert [(e.path, e.new) for e in creates] == [(c["path"], c["content"]) for c in created]
    replies = [x for x in t.turns if x.role == "assistant"]
    first_req = json.loads(next(r["text"] for r in ui if r.get("say") == "api_req_started"))
    assert replies[0].usage.output == first_req["tokensOut"]
    assert t.turns[0].role == "user" and t.turns[0].text == ui[0]["text"]


def test_cline_ui_messages_reasoning_and_completion() -> None:
    ui = json.loads(UI_FINEYE.read_text())
    t = load_transcript(UI_FINEYE)
    users = [x.text for x in t.turns if x.role == "user"]
    assert users == [r["text"] for r in ui if r.get("say") in ("user_feedback",) or r is ui[0]]
    reasoning = [r["text"] for r in ui if r.get("say") == "reasoning"]
    assert "".join(x.reasoning for x in t.turns) == "".join(reasoning)
    final = [x for x in t.turns if x.role == "assistant" and x.text == "Hey there!"]
    assert final and "claims-done" in final[0].flags


def _lines(path: Path) -> list[dict]:
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]


def test_copilot_events_log_turns_reasoning_and_usage() -> None:
    ev = _lines(CP_MEDIUM)
    t = load_transcript(CP_MEDIUM)
    assert t.format == "copilot-cli" and t.cwd == "/Users/testuser"
    kinds = [e["type"] for e in ev]
    assert [x.role for x in t.turns] == [
        {"user.message": "user", "assistant.message": "assistant", "tool.execution_complete": "tool"}[k]
        for k in kinds if k in ("user.message", "assistant.message", "tool.execution_complete")
    ]
    msgs = [e["data"] for e in ev if e["type"] == "assistant.message"]
    replies = [x for x in t.turns if x.role == "assistant"]
    assert [x.usage.output for x in replies] == [m["outputTokens"] for m in msgs]
    assert replies[0].reasoning == msgs[0]["reasoningText"]
    assert replies[0].tool_calls[0].name == "report_intent" and replies[-1].text == msgs[-1]["content"]
    assert "claims-done" in replies[-1].flags
    assert [x.time for x in t.turns] == [e["timestamp"] for e in ev if e["type"] in (
        "user.message", "assistant.message", "tool.execution_complete")]


def test_copilot_subagent_lines_are_grouped_under_their_task_call() -> None:
    ev = _lines(CP_DEMO)
    t = load_transcript(CP_DEMO)
    task = "toolu_vrtx_01TxUTxpA98CaQcbRogpf822"
    sub = [x for x in t.turns if x.group == task]
    want = sum(1 for e in ev if e["data"].get("parentToolCallId") == task
               and e["type"] in ("assistant.message", "tool.execution_complete"))
    assert len(sub) == want + 1  # + the turn holding the two parallel `view` calls whose request was cut
    views = [c for x in sub for c in x.tool_calls if c.name == "view"]
    assert [c.paths for c in views] == [("/Users/testuser/workspace/demo-project/hello.py",),
                                        ("/Users/testuser/workspace/demo-project/README.md",)]
    assert t.turns[-1].group is None and t.turns[-1].text.startswith("Subagent findings:")


TIMED = {"claude-code", "codex", "openhands", "mini-swe-agent", "inspect-ai", "cline", "copilot-cli", "gemini-cli",
         "opencode"}


@pytest.mark.parametrize(("path", "fmt"), real_samples(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_json_contract_on_every_real_sample(path: Path, fmt: str) -> None:
    data = json.loads(json.dumps(load_transcript(path).to_json()))
    assert data["format"] == fmt
    turns = data["turns"]
    assert turns
    for turn in turns:
        assert turn["time"] is None or re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d", turn["time"]), turn["time"]
        for e in turn["edits"]:
            assert set(e) in ({"file", "old", "new"}, {"file", "patch"}) and e["file"]
        for c in turn["commands"]:
            assert set(c) == {"command", "exit", "output_head"} and c["command"]
            assert c["exit"] is None or isinstance(c["exit"], int)
    stamped = path.is_dir() or path.suffix == ".eval" or any(
        k in path.read_text(errors="replace") for k in ('"timestamp"', '"ts":', '"ts": ', '"created": '))
    if fmt in TIMED and stamped:  # the file stamps its records: the model calls at least carry the time
        assert all(t["time"] for t in turns if t["role"] == "assistant"), path.name
    if fmt in ("cline", "codex", "claude-code", "mini-swe-agent", "openhands", "gemini-cli", "opencode") and any(
        c["kind"] == "shell" for t in turns for c in t["tool_calls"]
    ):
        assert any(t["commands"] for t in turns), path.name


GEMINI = FIXTURES / "gemini-cli"
POMODORO = GEMINI / "ai-sessions_gemini-cli-pomodoro-timer.json"
MATRIX = GEMINI / "aim_benchmark_matrix_pro.json"


def test_gemini_session_tool_results_edits_thoughts_and_usage() -> None:
    doc = json.loads(POMODORO.read_text())
    msgs = doc["messages"]
    calls = [c for m in msgs for c in m.get("toolCalls") or []]
    t = load_transcript(POMODORO)
    assert t.format == "gemini-cli"
    assert [x.role for x in t.turns if x.role != "tool"] == [
        "user" if m["type"] == "user" else "assistant" for m in msgs]
    assert len([x for x in t.turns if x.role == "tool"]) == len(calls)
    ok = [c for c in calls if c["status"] == "success"]
    edits = [e for x in t.turns for e in x.edits]
    assert len(edits) == len(ok)  # the failed replace changed nothing
    replaces = [c["args"] for c in ok if c["name"] == "replace"]
    assert [(e.old, e.new) for e in edits if e.operation == "replace"] == [
        (a["old_string"], a["new_string"]) for a in replaces]
    writes = [c["args"] for c in ok if c["name"] == "write_file"]
    assert [(e.path, e.new) for e in edits if e.operation == "write"] == [(a["file_path"], a["content"]) for a in writes]
    failed = next(c for c in calls if c["status"] == "error")
    bad = next(x for x in t.turns if x.role == "tool" and "tool-error" in x.flags)
    assert bad.text == failed["result"][0]["functionResponse"]["response"]["error"]
    replies = [x for x in t.turns if x.role == "assistant"]
    gem = [m for m in msgs if m["type"] == "gemini"]
    assert [(x.usage.input, x.usage.cached) for x in replies] == [
        (m["tokens"]["input"], m["tokens"]["cached"]) for m in gem]
    assert replies[0].reasoning.startswith(gem[0]["thoughts"][0]["subject"])
    assert [x.time for x in t.turns if x.role != "tool"] == [m["timestamp"] for m in msgs]


def test_gemini_shell_commands_carry_their_exit_codes() -> None:
    doc = json.loads(MATRIX.read_text())
    shells = [c for m in doc["messages"] for c in m.get("toolCalls") or [] if c["name"] == "run_shell_command"]
    t = load_transcript(MATRIX)
    cmds = [c for x in t.turns for c in x.commands]
    assert [c.command for c in cmds] == [c["args"]["command"] for c in shells]
    codes = [re.search(r"Exit Code: (-?\d+)", c["result"][0]["functionResponse"]["response"].get("output", ""))
             for c in shells]
    assert [c.exit for c in cmds] == [int(m.group(1)) if m else None for m in codes]
    assert 127 in [c.exit for c in cmds]


OPENCODE = FIXTURES / "opencode"
OC_READS = OPENCODE / "pfm-categorization_opencode-session.json"
OC_EDITS = OPENCODE / "Cap_opencode-session_messages1-60.json"


def _oc_tools(doc: dict) -> list[dict]:
    return [p for m in doc["messages"] for p in m["parts"] if p.get("type") == "tool"]


def test_opencode_export_tool_parts_commands_usage_and_time() -> None:
    doc = json.loads(OC_READS.read_text())
    t = load_transcript(OC_READS)
    assert t.format == "opencode" and t.cwd == doc["info"]["directory"]
    tools = _oc_tools(doc)
    answered = [p for p in tools if "output" in p["state"] or "error" in p["state"]]
    assert len([x for x in t.turns if x.role == "tool"]) == len(answered)
    assert sum(len(x.tool_calls) for x in t.turns) == len(tools)
    bash = [p for p in tools if p["tool"] == "bash"]
    cmds = [c for x in t.turns for c in x.commands]
    assert [(c.command, c.exit) for c in cmds] == [(p["state"]["input"]["command"], p["state"]["metadata"]["exit"])
                                                     for p in bash]
    infos = [m["info"] for m in doc["messages"] if m["info"]["role"] == "assistant"]
    replies = [x for x in t.turns if x.role == "assistant"]
    tok = infos[1]["tokens"]
    assert replies[1].usage.input == tok["input"] + tok["cache"]["read"] + tok["cache"]["write"]
    assert replies[1].usage.cached == tok["cache"]["read"]
    assert [x.time for x in t.turns if x.role != "tool"] == [
        iso_time(m["info"]["time"]["created"]) for m in doc["messages"]]


def test_opencode_export_write_edit_and_apply_patch_are_edits_a_failed_edit_is_not() -> None:
    doc = json.loads(OC_EDITS.read_text())
    tools = _oc_tools(doc)
    t = load_transcript(OC_EDITS)
    edits = [e for x in t.turns for e in x.edits]
    writes = [p["state"]["input"] for p in tools if p["tool"] == "write" and p["state"]["status"] == "completed"]
    assert [(e.path, e.new) for e in edits if e.operation == "write"] == [(w["filePath"], w["content"]) for w in writes]
    done = [p["state"]["input"] for p in tools if p["tool"] == "edit" and p["state"]["status"] == "completed"]
    assert [(e.old, e.new) for e in edits if e.operation == "replace"] == [(a["oldString"], a["newString"]) for a in done]
    assert any(p["tool"] == "edit" and p["state"]["status"] == "error" for p in tools)
    patches = {p["callID"]: p["state"]["input"]["patchText"] for p in tools if p["tool"] == "apply_patch"}
    files = [ln.split(": ", 1)[1] for text in patches.values() for ln in text.splitlines()
             if ln.startswith(("*** Add File: ", "*** Update File: ", "*** Delete File: "))]
    assert [e.path for e in edits if e.call_id in patches] == files and len(files) >= 2
    errored = [m["info"] for m in doc["messages"] if m["info"].get("error")]
    notes = [x for x in t.turns if x.role == "assistant" and x.stop == "error"]
    assert len(notes) == len(errored) and all(x.note for x in notes)
