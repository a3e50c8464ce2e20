"""The coder loop's message history: everything re-sent to the model each turn."""

from __future__ import annotations

from dataclasses import dataclass, field

# Sent after a turn that ran into the output-token limit before calling a tool.
NUDGE = "You ran out of output tokens mid-thought. Keep your reasoning short and call a tool now."


@dataclass
class ToolCall:
    """One tool call the model asked for."""

    id: str
    name: str
    arguments: str = "{}"


@dataclass
class Message:
    """One entry of the history; mutable so the loop can trim it in place."""

    role: str
    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)


def estimate_tokens(messages: list[Message]) -> int:
    """Return a rough prompt size: four characters per token of content and reasoning."""
    chars = sum(len(m.content) + len(m.reasoning) for m in messages)
    return (chars + 3) // 4


def last_assistant(messages: list[Message]) -> Message | None:
    """Return the most recent assistant message, or None when there is none."""
    for msg in reversed(messages):
        if msg.role == "assistant":
            return msg
    return None


def nudge_after_truncation(messages: list[Message]) -> None:
    """Append the nudge that tells a model cut off at the token limit to act."""
    messages.append(Message("user", NUDGE))


def clear_truncated_reasoning(messages: list[Message]) -> int | None:
    """Clear the reasoning of the turn that was cut off at the token limit.

    That reasoning never led to an action, yet it is sent back with every
    later request. Returns the index of the message cleared, or None.
    """
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if msg.role == "assistant" and msg.reasoning:
            msg.reasoning = ""
            return i
    return None
