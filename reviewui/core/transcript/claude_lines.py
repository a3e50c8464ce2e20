"""Reading Claude Code's JSONL lines for less than a full parse each.

Two kinds of line carry bytes the loader almost never needs. Hook progress
lines (about half the lines of a session) are never turns: `hook_progress`
recognises them unparsed. A tool's result line carries `toolUseResult`, a
second copy of the tool's output (a fifth to a half of a real session's
bytes) that is read only for an Edit or Write and for a result whose call is
not in the file: `parse_line` leaves it as a `DeferredResult`, parsed on
demand. Both decisions fall back to the ordinary parse whenever the line is
not shaped exactly as Claude Code writes it, so a malformed line is still
counted as skipped.
"""

from __future__ import annotations

from typing import Any

import reviewui.core.transcript.source as source

_RESULT_KEY = ',"toolUseResult":'
_MESSAGE_KEY = ',"message":'
_USER_MESSAGE = '{"role":"user"'


def hook_progress(raw: str) -> bool:
    """True for a whole top-level `progress` line that is not a subagent's: it is never a turn.

    Hook progress lines are about half the lines of a session; not parsing
    them is a tenth of the load. Only a key of the top-level object counts:
    `"type": "progress"` with no `{` before it (a nested object would need
    one, and inside a JSON string the quotes would be escaped), looked for in
    the line's first 600 characters (after the envelope; a longer envelope is
    simply parsed). A line that does not end in `}` is parsed as usual, so a
    cut one is still counted as skipped.
    """
    i = raw.find('"progress"', 0, 600)
    if i < 0:
        return False
    j = raw.rfind('"type"', 0, i)
    if j < 0 or raw[j + 6:i].strip(" :") or raw.find("{", 1, j) != -1:
        return False
    return (raw.endswith(("}\n", "}")) or raw.rstrip().endswith("}")) and '"agent_progress"' not in raw


class DeferredResult:
    """A line's `toolUseResult`, kept as the line's text until a loader asks for its value."""

    __slots__ = ("_raw", "_start")

    def __init__(self, raw: str, start: int) -> None:
        self._raw = raw
        self._start = start

    def value(self) -> Any:
        """The parsed `toolUseResult`; None when it is not one well-formed JSON value."""
        try:
            return source.scan_prefix(self._raw, self._start)[0]
        except ValueError:
            return None


def parse_line(raw: str) -> Any:
    """`source.parse_line(raw)`, but a top-level `toolUseResult` after `message` is left unparsed.

    Claude Code writes compact JSON with the envelope keys, then `message`,
    `uuid`, `timestamp`, `toolUseResult` and a trailing id; the result sits
    on user lines, whose message starts `{"role":"user"`. For such a line
    the message is parsed first and `toolUseResult` looked for only after
    it (searching the whole line would read through the tool's output the
    message holds, and every assistant line to its end). The part before
    `message`, the message and the keys between it and `toolUseResult` are
    parsed; the result becomes a `DeferredResult` and keys after it are
    dropped (none is read by the loader). The search cannot be fooled by
    text: inside a JSON string the key's quotes would be escaped, and a key
    nested deeper than the top level makes one of the three parses fail, as
    does a line not ending in `}`; every such line is parsed whole.
    """
    k = raw.find(_MESSAGE_KEY)
    if k > 0 and raw.startswith(_USER_MESSAGE, k + len(_MESSAGE_KEY)) and raw.endswith("}\n"):
        try:
            message, end = source.scan_prefix(raw, k + len(_MESSAGE_KEY))
            i = raw.find(_RESULT_KEY, end)
            if i < 0:
                raise ValueError("no result to defer")  # a typed prompt: parsed whole
            obj = source.parse_line(raw[:k] + "}")
            between = None
            if end < i and raw[end] == ",":
                between = source.parse_line("{" + raw[end + 1 : i] + "}")
            elif end != i:
                raise ValueError("not a key of the line's own object")
        except ValueError:
            pass
        else:  # both parsed texts end in `}`, so each is an object
            obj["message"] = message
            if between:
                obj.update(between)  # after `message`: a repeated key's last value wins, as in json
            obj["toolUseResult"] = DeferredResult(raw, i + len(_RESULT_KEY))
            return obj
    return source.parse_line(raw)


def tool_use_result(d: dict[str, Any]) -> Any:
    """The line's `toolUseResult` value, parsing it now when it was deferred."""
    extra = d.get("toolUseResult")
    return extra.value() if type(extra) is DeferredResult else extra
