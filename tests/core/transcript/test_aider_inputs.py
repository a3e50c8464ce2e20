"""Aider's `.aider.input.history` beside its chat history: when each request was typed, what no turn shows, and
which `#### ` lines the human never typed (a real pair from one run, the chat cut, the input history whole)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from reviewui.core.transcript import load_transcript, render_text
from reviewui.core.transcript.aider_inputs import input_history_for, read_inputs
from tests.core.transcript.helpers import FIXTURES, REPO

CHAT = FIXTURES / "aider" / "simple-calulator_lines1165-1654.aider.chat.history.md"
INPUTS = FIXTURES / "aider" / "simple-calulator_lines1165-1654.aider.input.history"


def _without_history(tmp_path: Path) -> Path:
    alone = tmp_path / CHAT.name
    shutil.copy(CHAT, alone)
    return alone


def test_the_input_history_is_read_as_prompt_toolkit_writes_it() -> None:
    inputs = read_inputs(INPUTS)
    raw = INPUTS.read_text(encoding="utf-8")
    assert len(inputs) == raw.count("\n# 2025-") == 29 == 8 + 8 + 1 + 12  # before, in turns, between, after
    assert inputs[0].time == "2025-05-04 17:06:57.158813" and inputs[0].text == "give me a quick summarized overview of this repo"
    multi = next(x for x in inputs if x.text.startswith("i get this error"))
    assert multi.text.count("\n") == 18 and multi.text.endswith("webpack compiled with 1 warning\n")  # a `+` empty line kept
    assert inputs[-1].text.startswith("update the README-j.md")
    assert input_history_for(CHAT) == INPUTS


def test_user_turns_get_the_time_they_were_typed() -> None:
    t = load_transcript(CHAT)
    users = [x for x in t.turns if x.role == "user" and x.kind is None]  # not the "Create new file? y" answers
    # ISO 8601 (issue 28): the time Aider wrote, its space made a `T`.
    assert [(x.text.split("\n")[0][:20], x.time) for x in users] == [
        ("/help", "2025-05-04T17:46:18.797239"),
        ("/model openai/qwen3:", "2025-05-04T17:46:34.003442"),
        ("/code please continu", "2025-05-04T17:47:21.673933"),
        ("please continue what", "2025-05-04T17:47:21.673933"),  # the message /code sent: the same input
        ("an error pop when I ", "2025-05-04T17:49:22.571663"),
        ("i get this error : o", "2025-05-04T17:51:46.790447"),  # 19 typed lines, one turn
        ("now I have: Module n", "2025-05-04T17:52:34.025830"),
        ("/reset", "2025-05-04T17:54:04.809455"),
        ("/models", "2025-05-04T17:54:30.853355"),
    ]
    assert all(x.time is None for x in t.turns if x.role != "user")
    assert all(x.time is None for x in load_transcript(FIXTURES / "aider" / "aider_session_2024-08-09_08-07-07_code_comment.md").turns)


def test_a_model_heading_is_not_a_user_turn_when_no_one_typed_it(tmp_path: Path) -> None:
    headings = ["#### If you're using **npm**:", "#### If you're using **yarn**:"]
    lines = CHAT.read_text(encoding="utf-8").splitlines()
    assert [i + 1 for i, ln in enumerate(lines) if ln in headings] == [448, 453]
    blind = load_transcript(_without_history(tmp_path))  # the chat alone cannot tell them from a request
    assert [x.text for x in blind.turns if x.role == "user" and x.text.startswith("If you're using")] == [
        h[5:] for h in headings]
    t = load_transcript(CHAT)
    assert not any(x.role == "user" and "If you're using" in x.text for x in t.turns)
    reply = next(x for x in t.turns if x.role == "assistant" and "styled-components` package" in x.text)
    assert all(h in reply.text for h in headings) and "yarn add styled-components" in reply.text
    assert len(t.turns) == len(blind.turns) - 4  # two false user turns, and the replies they split, are one reply
    assert any("2 '#### ' lines the human never typed" in n and "448, 453" in n for n in t.notes)


def test_inputs_no_turn_shows_are_notes_with_their_times() -> None:
    t = load_transcript(CHAT)
    notes = "\n".join(t.notes)
    assert "9 of 9 user turns dated" in notes
    between = next(n for n in t.notes if "between the chat's user turns" in n)
    assert between.endswith("2025-05-04 17:53:24 'N'") and "1 input typed" in between  # an answer typed at a question
    after = next(n for n in t.notes if "after the chat's last user turn" in n)
    assert "12 inputs" in after and "17:54:36 '/models open'" in after and "… and 7 more" in after
    before = next(n for n in t.notes if "before the chat's first user turn" in n)
    assert "8 earlier inputs (from 2025-05-04 17:06:57)" in before


def test_without_the_input_history_nothing_changes(tmp_path: Path) -> None:
    t = load_transcript(_without_history(tmp_path))
    assert t.notes == () and all(x.time is None for x in t.turns)


def test_an_unrelated_or_hostile_input_history_is_not_used(tmp_path: Path) -> None:
    chat = _without_history(tmp_path)
    history = tmp_path / INPUTS.name
    history.write_bytes(b"\n# 2030-01-01 00:00:00.0\n+rm -rf /\x1b[2J\n\n# \xff\xfe\n+\n+nothing typed here\n")
    t = load_transcript(chat)
    assert all(x.time is None for x in t.turns)
    assert t.notes == (f"{history.name}: none of its 2 inputs is a user turn of this chat; not used",)
    (tmp_path / "alone").mkdir()
    blind = load_transcript(_without_history(tmp_path / "alone"))
    assert [x.text for x in t.turns] == [x.text for x in blind.turns]  # no heading is re-read without a match
    history.write_text("", encoding="utf-8")
    assert load_transcript(chat).notes == (f"{history.name}: none of its 0 inputs is a user turn of this chat; not used",)


def test_headless_text_and_json_show_the_times_and_notes() -> None:
    text = render_text(load_transcript(CHAT))
    assert "#1 user  at 2025-05-04T17:46:18" in text
    assert "note: simple-calulator_lines1165-1654.aider.input.history: 1 input typed between" in text
    r = subprocess.run([sys.executable, "-m", "reviewui", "transcript", str(CHAT), "--format", "json"],
                       capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["turns"][0]["time"] == "2025-05-04T17:46:18.797239" and data["turns"][1]["time"] is None
    assert any("never typed" in n for n in data["notes"])


def test_inputs_typed_before_the_session_started_belong_to_another_session(tmp_path: Path) -> None:
    chat = tmp_path / CHAT.name
    # The same excerpt as Aider would open it: a session header, at 17:46 (the run's earlier inputs are before).
    chat.write_text("\n# aider chat started at 2025-05-04 17:46:00\n\n" + CHAT.read_text(encoding="utf-8"), encoding="utf-8")
    shutil.copy(INPUTS, tmp_path / INPUTS.name)
    t = load_transcript(chat)
    assert not any("before the chat's first user turn" in n for n in t.notes)
    assert [x.time for x in t.turns if x.role == "user"][0] == "2025-05-04T17:46:18.797239"
    chat.write_text(chat.read_text(encoding="utf-8").replace("17:46:00", "17:40:00"), encoding="utf-8")
    assert any("2 earlier inputs (from 2025-05-04 17:41:51)" in n for n in load_transcript(chat).notes)


def test_a_request_missing_from_the_history_stays_a_user_turn(tmp_path: Path) -> None:
    chat = tmp_path / CHAT.name
    shutil.copy(CHAT, chat)
    # Lose the `/reset` entry (as a history written by another Aider, or edited, would): its `#### ` block follows
    # Aider's own `> ` output, not a model reply, so it is still the human's request, only undated.
    text = INPUTS.read_text(encoding="utf-8")
    (tmp_path / INPUTS.name).write_text(text.replace("\n# 2025-05-04 17:54:04.809455\n+/reset\n", "\n"), encoding="utf-8")
    t = load_transcript(chat)
    reset = next(x for x in t.turns if x.text == "/reset")
    assert reset.role == "user" and reset.time is None
    assert any("2 '#### ' lines the human never typed" in n for n in t.notes)  # the headings still are the model's
