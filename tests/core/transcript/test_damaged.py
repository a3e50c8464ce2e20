"""Damaged input, cut from real files: a byte-order mark, empty documents, a document cut off or with a garbage line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.errors import ReviewError
from reviewui.core.transcript import load_transcript
from tests.core.transcript.helpers import FIXTURES, REPO

CODEX = FIXTURES / "codex" / "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
SWE = FIXTURES / "swe-agent" / "demo_function_calling_simple.traj"
OPENAI = FIXTURES / "openai" / "openhands_fncall_message_list_claude-sonnet-4.json"


def test_a_byte_order_mark_keeps_the_first_line(tmp_path: Path) -> None:
    p = tmp_path / "bom.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + CODEX.read_bytes())
    plain, bom = load_transcript(CODEX), load_transcript(p)
    assert bom.skipped_lines == 0 and len(bom.turns) == len(plain.turns)
    assert [t.text for t in bom.turns] == [t.text for t in plain.turns]


def test_a_byte_order_mark_on_a_json_document(tmp_path: Path) -> None:
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + OPENAI.read_bytes())
    assert len(load_transcript(p).turns) == len(load_transcript(OPENAI).turns)


@pytest.mark.parametrize("text", ["[]", "{}", '{"messages": []}', "[\n]\n", '{"history": [], "info": {}}'])
def test_empty_documents_are_zero_turns(tmp_path: Path, text: str) -> None:
    p = tmp_path / "e.json"
    p.write_text(text)
    t = load_transcript(p)
    assert t.turns == () and t.skipped_lines == 0


def test_empty_list_headless_exits_0_and_says_0_turns(tmp_path: Path) -> None:
    p = tmp_path / "e.json"
    p.write_text("[]")
    r = subprocess.run([sys.executable, "-m", "reviewui", "transcript", str(p)], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert "0 turns" in r.stdout


def test_a_cut_off_trajectory_loads_what_came_before(tmp_path: Path) -> None:
    text = SWE.read_text()
    whole = load_transcript(SWE)
    # Cut in the middle of the 8th history item: the killed agent's file.
    cut_at = text.index('"role"', text.index('"history"'))
    for _ in range(7):
        cut_at = text.index('"role"', cut_at + 1)
    cut_at = text.index('"content"', cut_at) + 15  # inside the content string
    p = tmp_path / "cut.traj"
    p.write_text(text[:cut_at])
    t = load_transcript(p)
    assert t.format == "swe-agent"
    assert 0 < len(t.turns) < len(whole.turns)
    assert [x.text for x in t.turns[:-1]] == [x.text for x in whole.turns[: len(t.turns) - 1]]
    line = text[:cut_at].count("\n") + 1
    assert any(f"broke off at line {line}" in n for n in t.notes), t.notes
    assert t.skipped_lines == 1  # the cut line itself; nothing after it


def test_a_garbage_line_stops_the_document_there_and_counts_the_rest(tmp_path: Path) -> None:
    lines = OPENAI.read_text().split("\n")
    whole = load_transcript(OPENAI)
    # After the 4th message closes, a line of junk (a log line pasted in).
    closes = [i for i, ln in enumerate(lines) if ln.strip() in ("},", "}")]
    at = closes[3] + 1
    damaged = lines[:at] + ["INFO 12:00:01 retrying request"] + lines[at:]
    p = tmp_path / "g.json"
    p.write_text("\n".join(damaged))
    t = load_transcript(p)
    assert t.format == "openai" and 0 < len(t.turns) < len(whole.turns)
    assert [x.text for x in t.turns] == [x.text for x in whole.turns[: len(t.turns)]]
    assert any(f"line {at + 1}" in n for n in t.notes)
    assert t.skipped_lines == sum(1 for ln in damaged[at:] if ln.strip())


def test_the_break_is_reported_headless(tmp_path: Path) -> None:
    p = tmp_path / "cut.traj"
    p.write_text(SWE.read_text()[:3000])
    r = subprocess.run(
        [sys.executable, "-m", "reviewui", "transcript", str(p), "--format", "json"], capture_output=True, text=True, cwd=REPO
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["turns"] and any("broke off at line" in n for n in data["notes"])


def test_a_document_with_nothing_readable_is_still_an_error(tmp_path: Path) -> None:
    p = tmp_path / "t.traj"
    p.write_text('{"history": [')
    with pytest.raises(ReviewError, match="not valid JSON"):
        load_transcript(p, "swe-agent")
