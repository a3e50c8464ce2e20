"""Transcripts are decoded in chunks (source.open_text): a character cut by a chunk's edge still arrives whole."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.source import _TEXT_CHUNK

EMOJI = "\U0001f389"  # four bytes in UTF-8


def _user_line(text: str) -> str:
    # The envelope of a real Claude Code user line (tests/fixtures/transcripts/claude-code), with our text.
    return json.dumps({
        "parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/dev/project",
        "sessionId": "491e126e-1e71-469c-ade2-fcc8af567c74", "version": "2.1.38", "gitBranch": "master",
        "type": "user", "message": {"role": "user", "content": text},
        "uuid": "89c1dcbb-5839-4876-9d89-da3bda24798c", "timestamp": "2026-02-11T10:00:00.000Z",
    }, ensure_ascii=False, separators=(",", ":")) + "\n"


def _session_cut_inside_a_character(edge: int) -> tuple[bytes, str]:
    """A one-line session whose byte `edge` falls in the middle of a four-byte character of its text."""
    for pad in range(4):
        text = "a" * pad + "\u00e9\u6f22" + EMOJI * (edge // 4 + 50)
        data = _user_line(text).encode("utf-8")
        start = data.index(EMOJI.encode())
        if (edge - start) % 4 == 2:
            assert data[edge - 1] >= 0x80 and data[edge] >= 0x80  # both sides of the edge inside one character
            return data, text
    raise AssertionError("no padding puts the edge inside a character")


@pytest.mark.parametrize("edge", [8192, _TEXT_CHUNK, 2 * _TEXT_CHUNK])
@pytest.mark.parametrize("shape", ["plain", "bom", "gzip"])
def test_a_character_across_a_chunk_edge_is_read_whole(tmp_path: Path, edge: int, shape: str) -> None:
    bom = b"\xef\xbb\xbf" if shape == "bom" else b""
    data, text = _session_cut_inside_a_character(edge - len(bom))
    p = tmp_path / "session.jsonl"
    p.write_bytes(gzip.compress(data) if shape == "gzip" else bom + data)
    t = load_transcript(p)
    assert t.skipped_lines == 0 and [x.text for x in t.turns] == [text]
