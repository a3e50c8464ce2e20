"""Aider: interrupted and errored replies are not edits, `/test` `/run` output and y/n answers are their own turns.

Both files are whole-line excerpts of Aider's own tests/fixtures/chat-history.md
(aider/SOURCE.txt). What each assertion expects is read off the excerpt's lines.
"""

from __future__ import annotations

from reviewui.core.transcript import load_transcript
from tests.core.transcript.helpers import FIXTURES

LOG = FIXTURES / "aider" / "chat-history_lines1810-2307.aider.chat.history.md"
RUN = FIXTURES / "aider" / "chat-history_lines21048-21057.aider.chat.history.md"


def _reply(t, start):  # type: ignore[no-untyped-def]
    return next(x for x in t.turns if x.role == "assistant" and x.text.startswith(start))


def test_a_reply_cut_by_an_api_error_stops_with_error_and_says_why() -> None:
    t = load_transcript(LOG)
    cut = _reply(t, "To fix the error, we need to import the `GitRepo` class at")
    assert cut.stop == "error" and cut.note and "litellm.InternalServerError" in cut.note
    assert not cut.edits and "claims-done" not in cut.flags


def test_an_interrupted_reply_makes_no_edits_and_says_why() -> None:
    lines = LOG.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Certainly! I'll make the necessary changes to replace"))
    tail = lines[start:]
    assert tail.count("<<<<<<< SEARCH") == 4 and tail.count(">>>>>>> REPLACE") == 3  # the last block never finished
    assert not any(ln.startswith("> Applied edit") for ln in tail)
    t = load_transcript(LOG)
    cut = _reply(t, "Certainly! I'll make the necessary changes to replace")
    assert cut.edits == () and cut.files_written == ()
    assert "writes-tests" not in cut.flags and "edits-existing-test" not in cut.flags
    assert cut.note and "interrupted" in cut.note and cut.stop not in ("end", "tool_use")
    applied = _reply(t, "To fix the error, we need to import the `GitRepo` class. Let's add")
    assert applied.edits and applied.files_written == ("tests/basic/test_repomap.py",)


def test_test_command_output_is_a_command_output_turn_not_an_assistant_reply() -> None:
    t = load_transcript(LOG)
    assert not any(x.role == "assistant" and ("test session starts" in x.text[:200] or x.text.startswith("platform "))
                   for x in t.turns)
    i = next(k for k, x in enumerate(t.turns) if x.role == "user" and x.text == "/test pytest tests/basic/test_repomap.py")
    user, out = t.turns[i], t.turns[i + 1]
    assert out.role == "tool" and out.kind == "command-output"
    assert "1 failed, 6 passed in 3.28s" in out.text
    assert [(c.command, c.exit) for c in user.commands] == [("pytest tests/basic/test_repomap.py", None)]
    assert user.commands[0].output_head.startswith("============================= test session starts")
    data = t.to_json()["turns"][i]
    assert data["commands"][0]["command"] == "pytest tests/basic/test_repomap.py"


def test_answers_to_aider_questions_are_answer_turns() -> None:
    t = load_transcript(LOG)
    answers = [x for x in t.turns if x.kind == "answer"]
    assert [(x.role, x.text) for x in answers] == [("user", "y")]  # "Attempt to fix lint errors? y"
    r = load_transcript(RUN)
    out = RUN.read_text().splitlines()[1][2:].strip()  # `> ` + the terminal's reply to tput (an ESC sequence)
    assert [(x.role, x.kind, x.text.strip()) for x in r.turns][:3] == [
        ("user", None, "/run tput u6"), ("tool", "command-output", out), ("user", "answer", "n"),
    ]
    assert r.turns[2].note == "answer to Aider's question: Add the output to the chat?"
    assert not any(x.role == "assistant" for x in r.turns)
