"""Inputs a user can get wrong: one clear ReviewError, never a traceback; damaged input loads what it can."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.transcript import detect_format, load_transcript, source
from tests.core.transcript.helpers import FIXTURES

RED_GREEN = FIXTURES / "claude_code_red_green.jsonl"


def _raises(path: Path, match: str, fmt: str | None = None) -> None:
    with pytest.raises(ReviewError, match=match) as info:
        load_transcript(path, fmt)
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    _raises(tmp_path / "nope.jsonl", "no such transcript")


def test_empty_and_blank_files(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_text("")
    (tmp_path / "b.jsonl").write_text("\n\n   \n")
    _raises(tmp_path / "e.jsonl", "empty")
    _raises(tmp_path / "b.jsonl", "empty")


def test_binary_and_prose_files_have_no_format(tmp_path: Path) -> None:
    (tmp_path / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20)
    # Aider histories are a format now (issue 17); other Markdown is still prose.
    (tmp_path / "notes.md").write_text("# Meeting notes\n\n- ship it\n")
    _raises(tmp_path / "x.png", "cannot tell the format")
    _raises(tmp_path / "notes.md", "cannot tell the format")


def test_json_of_no_known_shape(tmp_path: Path) -> None:
    (tmp_path / "d.json").write_text(json.dumps({"hello": "world"}))
    (tmp_path / "l.json").write_text(json.dumps([1, 2, 3]))
    _raises(tmp_path / "d.json", "cannot tell the format")
    _raises(tmp_path / "l.json", "cannot tell the format")


def test_unknown_forced_format_lists_the_known_ones() -> None:
    # `aider` became a format in issue 17; the error now lists every accepted name.
    _raises(RED_GREEN, "unknown transcript format 'nonsense'.*claude-code.*aider.*inspect-ai", "nonsense")


def test_forced_aliases_work() -> None:
    assert load_transcript(RED_GREEN, "claude").format == "claude-code"
    assert load_transcript(RED_GREEN, " Claude-Code ").format == "claude-code"


def test_forced_wrong_format_finds_nothing(tmp_path: Path) -> None:
    _raises(RED_GREEN, "nothing parseable .* as codex", "codex")
    _raises(FIXTURES / "codex_red_green.jsonl", "nothing parseable", "claude-code")


def test_forced_document_format_on_broken_json(tmp_path: Path) -> None:
    (tmp_path / "t.traj").write_text('{"history": [')
    _raises(tmp_path / "t.traj", "not valid JSON", "swe-agent")


def test_folder_that_is_not_an_openhands_conversation(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    _raises(tmp_path / "d", "not an OpenHands conversation")
    _raises(tmp_path / "d", "is a folder", "openai")


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "locked.jsonl"
    p.write_text(RED_GREEN.read_text())

    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    # Tests may run as root, for whom chmod 0 changes nothing: refuse the open itself.
    monkeypatch.setattr(source, "open", denied, raising=False)
    _raises(p, "cannot read transcript .*Permission denied")


def test_truncated_gzip_keeps_what_was_read(tmp_path: Path) -> None:
    data = gzip.compress(RED_GREEN.read_bytes() * 20, mtime=0)
    p = tmp_path / "cut.jsonl.gz"
    p.write_bytes(data[: len(data) * 2 // 3])
    t = load_transcript(p)
    assert t.format == "claude-code"
    assert t.skipped_lines >= 1  # the cut-off end
    assert 13 < len(t.turns) < 13 * 20


def test_corrupt_gzip(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl.gz"
    p.write_bytes(b"\x1f\x8b" + b"\x00garbage" * 10)
    _raises(p, "cannot read transcript")


def test_garbage_first_line_does_not_hide_the_format(tmp_path: Path) -> None:
    p = tmp_path / "g.jsonl"
    p.write_text('{"type": "assistant", "message": {"id": \n' + RED_GREEN.read_text())
    t = load_transcript(p)
    assert t.format == "claude-code" and t.skipped_lines == 1 and len(t.turns) == 13


def test_non_utf8_bytes_inside_a_line_cost_a_character_not_the_line(tmp_path: Path) -> None:
    line = json.dumps({"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user", "content": "caf\u00e9 X"}})
    raw = line.encode().replace("X".encode(), b"\xff")
    p = tmp_path / "n.jsonl"
    p.write_bytes(raw + b"\n")
    t = load_transcript(p)
    assert t.skipped_lines == 0 and t.turns[0].text == "caf\u00e9 \ufffd"


def test_very_long_line_is_detected_and_loaded(tmp_path: Path) -> None:
    big = "x" * (6 * 1024 * 1024)  # longer than the detection head
    lines = [
        {"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user", "content": big}},
        {"type": "assistant", "uuid": "a", "sessionId": "s", "message": {"id": "m", "role": "assistant", "content": "ok"}},
    ]
    p = tmp_path / "big.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert detect_format(p) == "claude-code"
    t = load_transcript(p)
    assert len(t.turns[0].text) == len(big)


def test_unexpected_shapes_are_skipped_not_fatal(tmp_path: Path) -> None:
    msgs = [
        {"role": "user", "content": "task"},
        "not a message",
        {"role": "assistant", "content": None, "tool_calls": "garbage"},
        {"role": "assistant", "content": [{"type": "tool_use", "name": 7, "input": None}], "usage": {"prompt_tokens": "many"}},
        {"role": "tool", "content": {"weird": True}, "tool_call_id": ["x"]},
    ]
    p = tmp_path / "m.json"
    p.write_text(json.dumps(msgs))
    t = load_transcript(p, "openai")
    assert t.skipped_lines == 1
    assert [x.role for x in t.turns] == ["user", "assistant", "assistant", "tool"]


def test_dangling_parents_and_unknown_line_types(tmp_path: Path) -> None:
    lines = [
        {"type": "brand-new-kind", "whatever": [1, 2]},
        {"type": "user", "uuid": "u", "parentUuid": "missing-1", "sessionId": "s", "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "uuid": "a", "parentUuid": "missing-2", "sessionId": "s",
         "message": {"id": "m", "role": "assistant", "content": [{"type": "future_block", "x": 1}, {"type": "text", "text": "yo"}]}},
    ]
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    t = load_transcript(p)
    assert t.skipped_lines == 0 and [x.text for x in t.turns] == ["hi", "yo"]


def test_folder_of_unrelated_json_is_not_a_conversation(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text("{}")
    _raises(tmp_path, "not an OpenHands conversation")
