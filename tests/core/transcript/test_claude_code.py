"""The Claude Code loader on the project's own fixtures: the cases the real samples lack."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.model import (
    CACHE_MISS,
    CLAIMS_DONE,
    COMPACTION,
    EDITS_EXISTING_TEST,
    EDITS_TEST_AFTER_FAILURE,
    PROMPT_CHANGED,
    REASONING_ONLY,
    REASONING_RESENT,
    TOOL_ERROR,
    TOUCH_DECLARED,
    TRUNCATED,
    WRITES_TESTS,
)
from tests.core.transcript.helpers import FIXTURES

RED_GREEN = FIXTURES / "claude_code_red_green.jsonl"


@pytest.fixture(scope="module")
def rg():
    return load_transcript(RED_GREEN)


def test_turns_roles_and_flags(rg) -> None:
    expected = [
        ("user", ()),
        ("assistant", (TRUNCATED, REASONING_ONLY, REASONING_RESENT)),
        ("assistant", (REASONING_RESENT,)),
        ("tool", (TOOL_ERROR,)),
        ("assistant", (WRITES_TESTS, EDITS_EXISTING_TEST, EDITS_TEST_AFTER_FAILURE)),
        ("tool", ()),
        ("assistant", (TOUCH_DECLARED,)),
        ("tool", ()),
        ("assistant", ()),
        ("tool", ()),
        ("system", (COMPACTION,)),
        ("system", (COMPACTION,)),
        ("assistant", (CLAIMS_DONE, CACHE_MISS, PROMPT_CHANGED)),
    ]
    assert [(t.role, t.flags) for t in rg.turns] == expected
    assert rg.format == "claude-code" and rg.skipped_lines == 0


def test_synthetic_max_output_tokens_line_truncates_the_response_it_follows(rg) -> None:
    cut = rg.turns[1]
    assert cut.stop == "max_tokens"
    assert cut.text == "" and cut.tool_calls == ()
    assert cut.reasoning_chars == len(cut.reasoning) > 1000


def test_synthetic_error_without_a_partial_response_is_its_own_truncated_turn(tmp_path: Path) -> None:
    lines = [
        {"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "uuid": "e", "parentUuid": "u", "sessionId": "s", "isApiErrorMessage": True,
         "error": "max_output_tokens", "message": {"model": "<synthetic>", "role": "assistant",
         "content": [{"type": "text", "text": "API Error: Claude's response exceeded the 32000 output token maximum."}]}},
        {"type": "assistant", "uuid": "r", "parentUuid": "e", "sessionId": "s", "isApiErrorMessage": True,
         "error": "rate_limit", "message": {"model": "<synthetic>", "role": "assistant",
         "content": [{"type": "text", "text": "API Error: rate limited"}]}},
    ]
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    t = load_transcript(p)
    assert [(x.role, x.stop) for x in t.turns] == [("user", "unknown"), ("assistant", "max_tokens"), ("assistant", "error")]
    assert TRUNCATED in t.turns[1].flags and TRUNCATED not in t.turns[2].flags
    assert CLAIMS_DONE not in t.turns[1].flags and CLAIMS_DONE not in t.turns[2].flags


def test_usage_counted_once_per_message_and_normalized(rg) -> None:
    b = rg.turns[2]  # msg_B: three lines, output snapshots 5, 5, 80
    assert b.usage.output == 80
    assert b.usage.input == 3 + 200 + 5000  # uncached + cache creation + cache read
    assert b.usage.cached == 5000
    assert [c.name for c in b.tool_calls] == ["Bash"] and b.text == "Running the tests first."
    assert rg.cumulative_input()[:3] == [0, 5004, 5004 + 5203]
    assert len(rg.cumulative_input()) == len(rg.turns)


def test_meta_sidechain_progress_and_snapshot_lines_are_not_turns(rg) -> None:
    texts = " ".join(t.text for t in rg.turns)
    assert "local-command-caveat" not in texts
    assert "sidechain" not in texts
    assert rg.task_text() == "Fix the null guard in src/ledger.py so that an empty batch totals zero."


def test_edit_to_existing_test_after_red_run(rg) -> None:
    edit = rg.turns[4]
    (fe,) = edit.edits
    assert fe.path == "/home/dev/ledger/tests/test_ledger.py"
    assert (fe.operation, fe.old, fe.new) == ("replace", "    assert total_of([]) is None", "    assert total_of([]) == 0")
    assert edit.files_written == ("/home/dev/ledger/tests/test_ledger.py",)


def test_write_result_says_the_file_existed_and_what_it_held(rg) -> None:
    (fe,) = rg.turns[6].edits
    assert fe.operation == "write" and fe.existed is True
    assert fe.old == "def total_of(batch):\n    return sum(batch) if batch else None\n"
    assert fe.patch is not None and "+    if not batch:" in fe.patch
    assert rg.touch_declared() == ["src/ledger.py"]


def test_last_claim_and_compaction(rg) -> None:
    assert rg.last_claim() is rg.turns[-1]
    assert "continued from a previous conversation" in rg.turns[11].text
    assert "150000" in rg.turns[10].text


def test_gzip_input_loads_the_same_transcript(rg) -> None:
    gz = load_transcript(FIXTURES / "claude_code_red_green.jsonl.gz")
    assert gz.to_json() == rg.to_json()
    assert gzip.decompress((FIXTURES / "claude_code_red_green.jsonl.gz").read_bytes()) == RED_GREEN.read_bytes()


def test_garbage_lines_are_skipped_and_counted() -> None:
    t = load_transcript(FIXTURES / "claude_code_garbage.jsonl")
    # not JSON, a cut-off object, an array, invalid UTF-8 bytes, an assistant line without a message
    assert t.skipped_lines == 5
    assert [x.role for x in t.turns] == ["user", "assistant", "user", "assistant"]
    assert t.turns[3].text == "Done: the helper is renamed and the docstring updated."


def test_failed_edit_writes_nothing_but_still_touched_tests(tmp_path: Path) -> None:
    lines = [
        {"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "uuid": "a", "sessionId": "s", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Edit",
             "input": {"file_path": "tests/test_x.py", "old_string": "assert a", "new_string": "assert b"}}]}},
        {"type": "user", "uuid": "r", "sessionId": "s", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": True,
             "content": "<tool_use_error>String to replace not found in file.</tool_use_error>"}]},
         "toolUseResult": "Error: String to replace not found in file."},
    ]
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    t = load_transcript(p)
    assert t.turns[1].edits == () and t.turns[1].files_written == ()
    assert WRITES_TESTS in t.turns[1].flags and EDITS_EXISTING_TEST not in t.turns[1].flags
    assert TOOL_ERROR in t.turns[2].flags


def test_result_whose_call_is_outside_an_excerpt_still_gives_the_edit(tmp_path: Path) -> None:
    line = {"type": "user", "uuid": "r", "parentUuid": "not-in-this-file", "sessionId": "s", "cwd": "/w",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "gone", "content": "ok"}]},
            "toolUseResult": {"filePath": "/w/tests/test_a.py", "oldString": "x", "newString": "y",
                              "structuredPatch": [{"oldStart": 3, "oldLines": 1, "newStart": 3, "newLines": 1,
                                                   "lines": ["-    assert f() == 1", "+    assert f() == 2"]}]}}
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps(line) + "\n" + json.dumps({"type": "progress", "sessionId": "s", "uuid": "p"}) + "\n")
    t = load_transcript(p)
    (turn,) = t.turns
    assert turn.role == "tool" and turn.files_written == ("/w/tests/test_a.py",)
    assert EDITS_EXISTING_TEST in turn.flags
    assert t.cwd == "/w"


def test_write_that_creates_a_test_is_not_an_edit_of_an_existing_one(tmp_path: Path) -> None:
    lines = [
        {"type": "assistant", "uuid": "a", "sessionId": "s", "cwd": "/w", "message": {"id": "m1", "role": "assistant",
         "content": [{"type": "tool_use", "id": "t1", "name": "Write",
                      "input": {"file_path": "/w/tests/test_new.py", "content": "def test_x():\n    assert 1\n"}}]}},
        {"type": "user", "uuid": "r", "sessionId": "s", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "File created"}]},
         "toolUseResult": {"type": "create", "filePath": "/w/tests/test_new.py", "content": "def test_x():\n    assert 1\n",
                           "structuredPatch": [], "originalFile": None}},
        {"type": "assistant", "uuid": "b", "sessionId": "s", "message": {"id": "m2", "role": "assistant",
         "content": [{"type": "tool_use", "id": "t2", "name": "Edit",
                      "input": {"file_path": "/w/tests/test_new.py", "old_string": "assert 1", "new_string": "assert 2"}}]}},
    ]
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    t = load_transcript(p)
    assert t.turns[0].edits[0].operation == "create" and t.turns[0].edits[0].existed is False
    assert WRITES_TESTS in t.turns[0].flags and EDITS_EXISTING_TEST not in t.turns[0].flags
    # Rewriting a line of a test this run created is not editing a test that existed before.
    assert WRITES_TESTS in t.turns[2].flags and EDITS_EXISTING_TEST not in t.turns[2].flags


# --- hook progress lines are passed over unparsed (the headless bench's budget) ------------------

AGENT_FILE = FIXTURES / "claude-code" / "agent-aac57f5.jsonl"
TASK_SESSION = FIXTURES / "claude-code" / "session_task_subagent_lines35-57.jsonl"


def test_hook_progress_lines_are_not_parsed_and_the_result_is_unchanged(monkeypatch, tmp_path: Path) -> None:
    from reviewui.core.transcript import source

    lines = AGENT_FILE.read_text(encoding="utf-8").splitlines(keepends=True)
    hooks = [ln for ln in lines if json.loads(ln).get("type") == "progress"
             and json.loads(ln)["data"].get("type") == "hook_progress"]
    assert len(hooks) == 12
    whole = load_transcript(AGENT_FILE)
    # The same file without its hook lines loads to the same turns (but for line numbers): they carry nothing.
    bare = tmp_path / "agent.jsonl"
    bare.write_text("".join(ln for ln in lines if ln not in hooks), encoding="utf-8")
    assert load_transcript(bare).to_json() == whole.to_json()
    parsed: list[str] = []
    real_parse = source.parse_line
    monkeypatch.setattr(source, "parse_line", lambda s: parsed.append(s) or real_parse(s))
    from reviewui.core.transcript import claude_code
    from reviewui.core.transcript.source import LineCounter

    counter = LineCounter()
    run = claude_code.load(AGENT_FILE, counter)  # the loader alone (detection reads the head on its own)
    assert len(run.drafts) == len(whole.turns) and counter.skipped == 0
    assert len(parsed) == len(lines) - len(hooks) and not set(parsed) & set(hooks)


def test_only_top_level_hook_progress_lines_are_passed_over(tmp_path: Path) -> None:
    from reviewui.core.transcript.claude_lines import hook_progress as _hook_progress

    lines = TASK_SESSION.read_text(encoding="utf-8").splitlines(keepends=True)
    agent = [ln for ln in lines if '"agent_progress"' in ln]
    assert agent and not any(_hook_progress(ln) for ln in agent)  # a subagent's turn: always parsed
    hook = '{"parentUuid":"a","isSidechain":false,"type":"progress","data":{"type":"hook_progress"},"uuid":"b"}\n'
    assert _hook_progress(hook)
    assert _hook_progress(hook.replace('"type":"progress"', '"type" : "progress"'))  # json.dumps spacing too
    assert not _hook_progress(hook[:60] + "\n")  # cut off: parsed, and counted as malformed
    # A turn whose tool input holds a `"type":"progress"` object is a turn (the `{` before it says nested).
    hostile = ('{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use",'
               '"id":"t1","name":"Bash","input":{"type":"progress","command":"rm -rf build"}}]},"uuid":"u1"}\n')
    assert not _hook_progress(hostile)
    p = tmp_path / "s.jsonl"
    p.write_text(hook + hostile + hook[:60] + "\n", encoding="utf-8")
    t = load_transcript(p, "claude-code")
    assert [c.name for x in t.turns for c in x.tool_calls] == ["Bash"] and t.skipped_lines == 1
