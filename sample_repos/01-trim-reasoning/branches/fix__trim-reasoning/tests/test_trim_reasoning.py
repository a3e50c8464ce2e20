from coder.history import NUDGE, Message, ToolCall, clear_truncated_reasoning


def test_clears_reasoning_of_the_truncated_turn():
    messages = [
        Message("user", "Make the retry test stop flaking."),
        Message("assistant", reasoning="Maybe the backoff is too short, or maybe the clock... " * 200),
        Message("user", NUDGE),
        Message("assistant", tool_calls=[ToolCall("call_1", "run_tests")]),
    ]

    cleared = clear_truncated_reasoning(messages)

    assert cleared == 1
    assert messages[1].reasoning == ""


def test_nothing_to_clear_returns_none():
    messages = [Message("user", "hi"), Message("assistant", "hello")]
    assert clear_truncated_reasoning(messages) is None


def test_continuation_keeps_its_own_short_reasoning():
    # Told to keep it short, a verbose model still thinks a little before its
    # tool call. That reasoning belongs to a live turn; only the cut-off
    # turn (reasoning, no tool call) is waste.
    messages = [
        Message("assistant", reasoning="wasted thought cut off at the limit"),
        Message("user", NUDGE),
        Message("assistant", reasoning="run the tests first", tool_calls=[ToolCall("call_2", "run_tests")]),
    ]

    cleared = clear_truncated_reasoning(messages)

    assert cleared == 0
    assert messages[0].reasoning == ""
    assert messages[2].reasoning == "run the tests first"
