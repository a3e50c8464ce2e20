"""Claude Code lines read with `toolUseResult` deferred: the same transcript, less parsing.

The real files below hold tool results of every kind the loader treats
differently: a Write and two Edits (their result says what the edit did), a
Read and a Task (a copy of the output), and a result whose call lies before
the excerpt (read for its patch).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewui.core.transcript import Transcript, claude_lines, load_transcript, source

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts" / "claude-code"
EDITS = FIXTURES / "cc2.1.x_session_8463c716_lines139-188_test_edits.jsonl"
TASK = FIXTURES / "session_task_subagent_lines35-57.jsonl"


def _whole_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claude_lines, "parse_line", source.parse_line)


def _seen(t: Transcript) -> tuple[object, ...]:
    """The transcript's JSON and what its edits say (the part a tool result can change)."""
    return t.to_json(), [(e.operation, e.path, e.existed, e.old, e.new) for x in t.turns for e in x.edits]


@pytest.mark.parametrize("path", [EDITS, TASK], ids=["edits", "task"])
def test_deferring_the_result_loads_the_same_transcript_as_a_whole_parse(path: Path, monkeypatch) -> None:
    assert path.read_text(encoding="utf-8").count(',"toolUseResult":') >= 4  # the lines this is about
    deferred = _seen(load_transcript(path, "claude-code"))
    _whole_parse(monkeypatch)
    assert _seen(load_transcript(path, "claude-code")) == deferred


def test_only_an_edit_or_an_orphan_result_is_parsed(monkeypatch) -> None:
    asked: list[str] = []
    real_value = claude_lines.DeferredResult.value
    monkeypatch.setattr(claude_lines.DeferredResult, "value", lambda self: asked.append(self._raw) or real_value(self))
    t = load_transcript(EDITS, "claude-code")
    names = {b["id"]: b["name"] for ln in EDITS.read_text(encoding="utf-8").splitlines()
             if json.loads(ln)["type"] == "assistant"
             for b in json.loads(ln)["message"]["content"] if b.get("type") == "tool_use"}
    read = sorted(names.get(json.loads(raw)["message"]["content"][0]["tool_use_id"], "(call not in file)")
                  for raw in asked)
    # The Write's result (created or replaced?) and the orphan's patch are read; the two Edits'
    # and the Read's results (copies of what the call and the output already say) are not.
    assert read == ["(call not in file)", "Write"]
    writes = [e for x in t.turns for e in x.edits if e.operation == "write"]
    # Only the result's `originalFile` says what the Write replaced.
    assert len(writes) == 1 and writes[0].existed is True and writes[0].old


def _line(result: str, *, tail: str = ',"sourceToolAssistantUUID":"a1"}\n') -> str:
    msg = ('{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"' + result + '"}]}')
    return ('{"parentUuid":"a1","isSidechain":false,"cwd":"/w","type":"user","message":' + msg
            + ',"uuid":"u2","timestamp":"2026-01-01T00:00:00Z","toolUseResult":' + CREATED + tail)


CREATED = '{"type":"create","filePath":"/w/a.py","content":"x = 1"}'
WRITE_CALL = ('{"parentUuid":null,"isSidechain":false,"cwd":"/w","type":"assistant","message":{"id":"m1",'
              '"role":"assistant","model":"m","content":[{"type":"tool_use","id":"t1","name":"Write",'
              '"input":{"file_path":"/w/a.py","content":"x = 1"}}]},"uuid":"a1"}\n')


@pytest.mark.parametrize(
    "line",
    [
        # The key as text inside the tool's output: escaped, so never taken for the key.
        _line('found \\",\\"toolUseResult\\":{} in the log'),
        # A key `toolUseResult` nested in the message: the split fails and the line is parsed whole
        # (read there, the nested value would say the Write replaced a file).
        _line("ok").replace('"content":"ok"', '"content":"ok","x":{"a":1,"toolUseResult":{"type":"update",'
                            '"originalFile":"old"}}'),
        # A line written with spaces (not Claude Code's own): parsed whole.
        json.dumps(json.loads(_line("ok"))) + "\n",
    ],
    ids=["key-in-text", "nested-key", "spaced"],
)
def test_lines_not_shaped_as_claude_code_writes_them_load_as_a_whole_parse(line: str, tmp_path, monkeypatch) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(WRITE_CALL + line, encoding="utf-8")
    deferred = load_transcript(p, "claude-code")
    assert [x.role for x in deferred.turns] == ["assistant", "tool"] and deferred.skipped_lines == 0
    assert [(e.operation, e.old) for e in deferred.turns[0].edits] == [("create", None)]
    _whole_parse(monkeypatch)
    assert _seen(load_transcript(p, "claude-code")) == _seen(deferred)


@pytest.mark.parametrize(
    "line",
    [
        _line("ok")[:-40] + "\n",  # cut off inside the result, as when the agent is killed mid-write
        _line("ok").replace(']},"uuid"', ']}X"uuid"'),  # garbage between the message and the next key
        _line("ok", tail="}\n").replace('"timestamp"', '"timestamp":1,,"t"'),  # a broken key between
    ],
    ids=["cut", "garbage-after-message", "broken-between"],
)
def test_a_malformed_tool_result_line_is_still_counted_as_skipped(line: str, tmp_path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(WRITE_CALL + line, encoding="utf-8")
    t = load_transcript(p, "claude-code")
    assert t.skipped_lines == 1 and [x.role for x in t.turns] == ["assistant"]


def test_a_deferred_result_that_is_not_json_reads_as_none() -> None:
    line = _line("ok", tail="}\n").replace(CREATED, '{"type":')
    d = claude_lines.parse_line(line)
    assert d["message"]["content"][0]["content"] == "ok" and d["uuid"] == "u2"
    assert claude_lines.tool_use_result(d) is None
    good = claude_lines.parse_line(_line("ok"))
    assert type(good["toolUseResult"]) is claude_lines.DeferredResult
    assert claude_lines.tool_use_result(good) == json.loads(CREATED)


def test_a_result_right_after_the_message_is_deferred_too(tmp_path) -> None:
    # No key between `message` and `toolUseResult`: nothing to parse between them.
    line = _line("ok").replace(',"uuid":"u2","timestamp":"2026-01-01T00:00:00Z"', "")
    d = claude_lines.parse_line(line)
    assert type(d["toolUseResult"]) is claude_lines.DeferredResult
    assert d["message"]["content"][0]["content"] == "ok" and "uuid" not in d
    p = tmp_path / "s.jsonl"
    p.write_text(WRITE_CALL + line, encoding="utf-8")
    t = load_transcript(p, "claude-code")
    assert t.skipped_lines == 0 and [(e.operation, e.old) for e in t.turns[0].edits] == [("create", None)]


def test_a_result_that_is_a_string_is_not_a_malformed_line(tmp_path) -> None:
    # Some tools record a plain string as `toolUseResult`; a Write's result must still load.
    line = _line("ok").replace(CREATED, '"File written"')
    p = tmp_path / "s.jsonl"
    p.write_text(WRITE_CALL + line, encoding="utf-8")
    t = load_transcript(p, "claude-code")
    assert t.skipped_lines == 0 and [x.role for x in t.turns] == ["assistant", "tool"]
    assert [e.operation for e in t.turns[0].edits] == ["write"]  # what the call said; the result adds nothing


def test_progress_as_the_value_of_another_key_is_not_a_hook_line() -> None:
    turn = ('{"parentUuid":null,"type":"user","status":"progress","message":{"role":"user",'
            '"content":"go on"},"uuid":"u1"}\n')
    assert not claude_lines.hook_progress(turn)


@pytest.mark.parametrize("path", [EDITS, TASK], ids=["edits", "task"])
def test_every_result_line_of_a_real_session_is_deferred_and_no_other(path: Path) -> None:
    # The message is parsed first and the result looked for after it: that must still find every
    # result Claude Code wrote at the top level of a line (not the copies nested in a subagent's
    # progress line), and leave the assistant lines, which have none, to one plain parse.
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    whole = [json.loads(ln) for ln in lines]
    assert any("toolUseResult" in w for w in whole)
    for ln, w in zip(lines, whole, strict=True):
        d = claude_lines.parse_line(ln)
        assert (type(d.get("toolUseResult")) is claude_lines.DeferredResult) == ("toolUseResult" in w), ln[:200]
        assert {k: v for k, v in d.items() if k != "toolUseResult"} == {
            k: v for k, v in w.items() if k in d and k != "toolUseResult"
        }
