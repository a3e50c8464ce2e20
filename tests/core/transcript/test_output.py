"""The JSON contract of `reviewui transcript FILE --format json` and the plain-text rendering."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from reviewui.core.transcript import FLAGS, FORMATS, Turn, load_transcript, render_text
from reviewui.core.transcript.model import NO_USAGE, ToolCall
from tests.core.transcript.helpers import FIXTURES, REPO

# Issue 17 added `reasoning` (the full text), `group` (the Task call a subagent turn belongs to) and
# `time` (when the turn was typed: Aider's input history). Issue 28 added `edits` ({file, old, new} or
# {file, patch}), `commands` ({command, exit, output_head}), `kind` (a finer kind than the role) and `note`
# (why a turn reads as it does), and `time` is filled wherever the file records one.
TURN_KEYS = {
    "index", "role", "text", "reasoning", "reasoning_chars", "tool_calls", "files_written", "stop", "usage", "flags",
    "group", "time", "edits", "commands", "kind", "note",
}
ROLES = {"user", "assistant", "tool", "system"}
STOPS = {"end", "tool_use", "max_tokens", "context_window", "error", "unknown"}
KINDS = {"edit", "write", "shell", "read", "finish", "other"}


def test_flag_and_format_vocabularies_are_the_contract() -> None:
    assert FLAGS == (
        "truncated", "reasoning-only", "reasoning-resent", "writes-tests", "edits-existing-test",
        "edits-test-after-failure", "claims-done", "cache-miss", "prompt-changed", "tool-error",
        "compaction", "touch-declared",
    )
    assert set(FORMATS) == {  # issue 28 added gemini-cli, copilot-cli, cline and opencode; issue 42 qwen-code, cursor,
        "claude-code", "codex", "openai", "anthropic", "mini-swe-agent", "swe-agent", "openhands", "aider", "inspect-ai",
        "gemini-cli", "copilot-cli", "cline", "opencode", "qwen-code", "cursor", "copilot-chat",  # copilot-chat
    }


def test_json_has_exactly_the_contract_keys_for_every_fixture() -> None:
    top = [p for p in FIXTURES.iterdir() if p.is_file() or p.name == "openhands_v1_conversation"]
    # The real samples, one folder per format (issue 17), each with its SOURCE manifest.
    real = [  # every file but SOURCE.txt, base-commit files (*.txt) and an Aider input history (read with its chat)
        p for d in FIXTURES.iterdir() if (d / "SOURCE.txt").is_file() for p in d.iterdir()
        if not p.name.endswith((".txt", ".aider.input.history"))
    ]
    paths = top + real
    assert len(top) >= 9 and len(real) >= 11
    for path in paths:
        data = json.loads(json.dumps(load_transcript(path).to_json()))
        assert set(data) == {"format", "turns", "skipped_lines", "notes"}, path
        assert data["format"] in FORMATS
        for turn in data["turns"]:
            assert set(turn) == TURN_KEYS, path
            assert turn["role"] in ROLES and turn["stop"] in STOPS
            assert set(turn["usage"]) == {"input", "cached", "output"}
            assert all(set(c) == {"name", "kind", "paths"} and c["kind"] in KINDS for c in turn["tool_calls"])
            assert all(f in FLAGS for f in turn["flags"])
            assert turn["flags"] == [f for f in FLAGS if f in turn["flags"]]  # FLAGS order


def test_json_values_for_one_turn() -> None:
    t = load_transcript(FIXTURES / "claude_code_red_green.jsonl")
    assert t.to_json()["turns"][4] == {
        "index": 5,
        "role": "assistant",
        "text": "",
        "reasoning": "",
        "reasoning_chars": 0,
        "tool_calls": [{"name": "Edit", "kind": "edit", "paths": ["/home/dev/ledger/tests/test_ledger.py"]}],
        "files_written": ["/home/dev/ledger/tests/test_ledger.py"],
        "stop": "tool_use",
        "usage": {"input": 5503, "cached": 5200, "output": 60},
        "flags": ["writes-tests", "edits-existing-test", "edits-test-after-failure"],
        "group": None,
        "time": "2026-03-01T10:00:00.000Z",
        "edits": [{
            "file": "/home/dev/ledger/tests/test_ledger.py",
            "old": "    assert total_of([]) is None",
            "new": "    assert total_of([]) == 0",
        }],
        "commands": [],
        "kind": None,
        "note": None,
    }


def test_from_parts_builds_the_same_record_as_the_constructor() -> None:
    call = ToolCall("Bash", {"command": "ls"}, "shell", (), "t1")
    fields = (3, "assistant", "hi", "th", 2, (call,), (), "tool_use", NO_USAGE, ("claims-done",), (), ("a.py",), 7)
    fast, slow = Turn.from_parts(*fields), Turn(*fields)
    assert fast == slow and repr(fast) == repr(slow) and hash(fast.flags) == hash(slow.flags)


def test_render_text_shows_flags_usage_and_calls() -> None:
    out = render_text(load_transcript(FIXTURES / "claude_code_red_green.jsonl"))
    assert "format: claude-code   turns: 13   skipped lines: 0" in out
    assert "#5 assistant  at 2026-03-01T10:00:00  stop=tool_use  in=5,503 cached=5,200 out=60" in out
    assert "flags: writes-tests, edits-existing-test, edits-test-after-failure" in out
    assert "→ Edit [edit] /home/dev/ledger/tests/test_ledger.py" in out
    assert "TOUCH declared: src/ledger.py" in out
    assert "last claim: turn 13" in out
    assert out.count("\n#") == 13


def test_render_text_escapes_hostile_text(tmp_path: Path) -> None:
    hostile = "[bold red]x[/bold red] \x1b[31mred\x1b[0m \u202eevil\x07"
    p = tmp_path / "h.jsonl"
    p.write_text(json.dumps({"role": "user", "content": hostile}) + "\n"
                 + json.dumps({"role": "assistant", "content": "ok", "tool_calls": [
                     {"id": "c", "function": {"name": "bash\x1b]0;title\x07", "arguments": "{}"}}]}) + "\n")
    out = render_text(load_transcript(p))
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "\\x1b[31mred" in out and "\\u202eevil" in out
    assert "[bold red]x[/bold red]" in out  # plain text: markup-looking text is just text


def test_core_transcript_does_not_import_textual_or_rich() -> None:
    code = (
        "import sys; import reviewui.core.transcript as t; "
        "t.load_transcript(sys.argv[1]); t.render_text(t.load_transcript(sys.argv[1])); "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(FIXTURES / "codex_red_green.jsonl")],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_linked_commands_are_the_same_records_as_the_constructor_builds() -> None:
    from reviewui.core.transcript.commands import _command
    from reviewui.core.transcript.model import Command

    fast, slow = _command("pytest -q", 1, "F.", "t1", 4), Command("pytest -q", 1, "F.", "t1", 4)
    assert fast == slow and repr(fast) == repr(slow) and hash(fast) == hash(slow)
