from coder.history import NUDGE, Message, ToolCall, estimate_tokens, last_assistant, nudge_after_truncation


def test_estimate_counts_content_and_reasoning():
    messages = [Message("user", "a" * 8), Message("assistant", "b" * 3, reasoning="c" * 5)]
    assert estimate_tokens(messages) == 4


def test_estimate_of_nothing_is_zero():
    assert estimate_tokens([]) == 0


def test_last_assistant_skips_later_user_messages():
    reply = Message("assistant", "on it", tool_calls=[ToolCall("call_1", "read_file")])
    messages = [Message("user", "fix it"), reply, Message("user", "tool output")]
    assert last_assistant(messages) is reply


def test_last_assistant_of_user_only_history_is_none():
    assert last_assistant([Message("user", "hello")]) is None


def test_nudge_is_appended_as_a_user_message():
    messages = [Message("assistant", reasoning="thinking...")]
    nudge_after_truncation(messages)
    assert messages[-1] == Message("user", NUDGE)
