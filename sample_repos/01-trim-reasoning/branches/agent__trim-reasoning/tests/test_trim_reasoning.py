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
