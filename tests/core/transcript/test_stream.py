"""The streamed JSON of `reviewui transcript --format json` is the contract's value, reasoning text included."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from reviewui.core.transcript import load_transcript
from reviewui.core.transcript.stream import write_json
from tests.core.transcript.helpers import FIXTURES, REPO

MINI_DS = FIXTURES / "openai_prefix_change.jsonl"
CC = FIXTURES / "claude_code_red_green.jsonl"


def test_streamed_json_is_the_contract_value_for_every_real_sample() -> None:
    paths = [p for d in FIXTURES.iterdir() if (d / "SOURCE.txt").is_file() for p in d.iterdir()
             if not p.name.endswith((".txt", ".aider.input.history"))]  # an input history is read with its chat
    for p in paths + [CC, MINI_DS]:
        t = load_transcript(p)
        buf = io.StringIO()
        write_json(t, buf.write, {"extra": [1]})
        assert json.loads(buf.getvalue()) == dict(t.to_json(), extra=[1]), p
        assert buf.getvalue().count("\n") >= len(t.turns)  # a line per turn, not one big blob


def test_headless_json_carries_the_full_reasoning_text() -> None:
    t = load_transcript(CC)
    thought = [x for x in t.turns if x.reasoning]
    assert thought
    r = subprocess.run(
        [sys.executable, "-m", "reviewui", "transcript", str(CC), "--format", "json"], capture_output=True, text=True, cwd=REPO
    )
    assert r.returncode == 0, r.stderr
    turns = json.loads(r.stdout)["turns"]
    for x in thought:
        assert turns[x.index - 1]["reasoning"] == x.reasoning and len(x.reasoning) == x.reasoning_chars


def test_transcript_command_does_not_import_the_reviews_machinery() -> None:
    # Startup is part of the headless budget: `transcript FILE` goes through the session facade,
    # which must not pull in the evidence ledger, the findings, the diff model or the UI for it.
    code = (
        "import sys; from reviewui.cli import main; "
        f"rc = main(['transcript', {str(CC)!r}, '--format', 'json']); "
        "sys.stderr.write(repr(sorted(m for m in sys.modules if m.startswith(("
        "'reviewui.core.evidence', 'reviewui.core.findings', 'reviewui.core.diff', 'reviewui.ui', 'textual'))))); "
        "sys.exit(rc)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0 and json.loads(r.stdout)["format"] == "claude-code"
    assert r.stderr == "[]"


def test_a_line_parses_exactly_as_json_loads_would() -> None:
    from reviewui.core.transcript.source import parse_line

    lines = ['{"a": 1}\n', '  {"a": [1, 2]}\r\n', '{"a": 1} {"b": 2}\n', '{"a": 1}x\n', '{"a": 1}\x0c\n', "\n", "",
             "\ufeff{}\n", "[1, 2]\n", '"text"\n', "NaN\n", '{"a": NaN}\n', '{"a": 1', "1 2\n", '{"k": "\\u00e9\\n"}\t \n',
             "\x00\n", '{"a":{"b":{"c":[true,false,null]}}}\n']
    for ln in lines:
        try:
            want: object = json.loads(ln)
        except ValueError:
            want = ValueError
        try:
            got: object = parse_line(ln)
        except ValueError:
            got = ValueError
        assert repr(got) == repr(want), ln  # repr: NaN != NaN
