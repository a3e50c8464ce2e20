"""The record fixes of issue 42: Aider whole-file edits, a Codex exec stream behind a log line, an OpenHands
LLM-call log's time, and files a script wrote that the diff or the script's own output accounts for."""

from __future__ import annotations

import json
import re
from pathlib import Path

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.linking import link_hunks
from tests.core.transcript.helpers import FIXTURES, FakeHunk, Line

AIDER_WHOLE = FIXTURES / "aider" / "simple-calulator_lines1165-1654.aider.chat.history.md"
CODEX_EXEC = FIXTURES / "codex" / "exec_json_issue-119_test_scenario_lines1-5_28-37.jsonl"
LLM_LOG = FIXTURES / "openai" / "nonfncall_llmlog_deepseek-chat_call4.json"


def test_aider_whole_file_edits_applied_by_the_editor_are_edits() -> None:
    text = AIDER_WHOLE.read_text()
    assert "with whole edit format" in text
    applied = re.findall(r"^> Applied edit to (src/\S+)  $", text, re.M)
    t = load_transcript(AIDER_WHOLE)
    writes = [(x.index, e) for x in t.turns for e in x.edits]
    assert [e.path for _, e in writes] == applied and len(applied) == 2
    for idx, e in writes:
        reply = t.turn(idx).text
        fenced = reply.split(e.path + "**\n```\n", 1)[-1] if e.path + "**\n```" in reply else reply.split(e.path + "\n```\n", 1)[-1]
        assert e.operation == "write" and e.new == fenced.split("\n```", 1)[0] + "\n"
    # "Applied edit to If you're using **npm**" names no file block: no edit is made up for it
    assert "Applied edit to If you're using **npm**" in text and all(" " not in e.path for _, e in writes)


def test_codex_exec_stream_behind_a_leading_log_line_is_detected(tmp_path: Path) -> None:
    p = tmp_path / "exec.jsonl"
    p.write_text("[WARN] codex_core::config: ignoring unknown key `foo`\n" + CODEX_EXEC.read_text())
    t = load_transcript(p)
    plain = load_transcript(CODEX_EXEC)
    assert t.format == "codex" and [x.text for x in t.turns] == [x.text for x in plain.turns]
    assert t.skipped_lines == plain.skipped_lines + 1  # the log line is counted, not read


def test_openhands_llm_call_log_gives_its_reply_the_log_time() -> None:
    doc = json.loads(LLM_LOG.read_text())
    t = load_transcript(LLM_LOG)
    reply = t.turns[-1]
    assert reply.role == "assistant" and reply.time is not None
    from datetime import datetime, timezone
    want = datetime.fromtimestamp(doc["timestamp"], tz=timezone.utc)
    assert datetime.fromisoformat(reply.time.replace("Z", "+00:00")) == want.replace(microsecond=want.microsecond // 1000 * 1000)


def _run(tmp_path: Path, command: str, output: str) -> Path:
    p = tmp_path / "run.json"
    p.write_text(json.dumps([
        {"role": "user", "content": "regenerate the settings"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": output},
        {"role": "assistant", "content": "Done."},
    ]))
    return p


def _hunk(path: str, *added: str) -> FakeHunk:
    return FakeHunk(path, 0, tuple(Line("added", a) for a in added))


def test_a_file_rewritten_by_a_repo_script_is_attributed_when_its_output_names_it(tmp_path: Path) -> None:
    t = load_transcript(_run(tmp_path, "python tools/regen.py", "wrote src/settings_gen.py (12 keys)\n"))
    links = link_hunks(t, [_hunk("src/settings_gen.py", "TIMEOUT = 30"), _hunk("src/other.py", "X = 1")])
    assert links.by_script == {"src/settings_gen.py": (2,)} and links.turns_for_file("src/settings_gen.py") == [2]
    assert links.unattributed == ("src/other.py",)  # the output names one file, not every file


def test_a_file_written_by_a_script_the_diff_adds_is_attributed_to_the_turn_that_ran_it(tmp_path: Path) -> None:
    t = load_transcript(_run(tmp_path, "python migrate_conf.py", "ok\n"))
    script = _hunk("migrate_conf.py", "import re", "open('conf/app.cfg', 'w').write('retries = 5\\n')")
    target = _hunk("conf/app.cfg", "retries = 5")
    links = link_hunks(t, [script, target])
    assert links.by_script == {"conf/app.cfg": (2,)}
    assert links.unattributed == ("migrate_conf.py",)  # the script itself: no turn shows it written
