"""Reading what is readable of a damaged JSON document.

A trajectory written by an agent that was killed mid-run ends in the middle
of an object; one hand-edited or concatenated carelessly has a garbage line in
the middle. `salvage` parses such a document element by element: every array
item and object member that parses whole is kept, a member that does not is
descended into (so the turns before the break inside `history` survive), and
parsing stops at the first byte that cannot be read. It reports where that was
and how many non-blank lines it left unread.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

_DECODER = json.JSONDecoder()
_WS = " \t\n\r"


@dataclass(frozen=True)
class Salvaged:
    """What could be read of a damaged JSON document."""

    value: Any
    """The document as far as it parsed (containers closed where it broke)."""
    line: int
    """1-based line where parsing stopped."""
    column: int
    """1-based column where parsing stopped."""
    skipped_lines: int
    """Non-blank lines from the break to the end of the text, left unread."""
    reason: str
    """What was wrong at the break (the JSON decoder's message)."""


class _Broken(Exception):
    def __init__(self, value: Any, pos: int, reason: str) -> None:
        super().__init__(reason)
        self.value = value
        self.pos = pos
        self.reason = reason


def _ws(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _WS:
        i += 1
    return i


def _value(s: str, i: int) -> tuple[Any, int]:
    """Parse one value at `i`; raise _Broken (carrying the partial value) where it breaks."""
    i = _ws(s, i)
    try:
        return _DECODER.raw_decode(s, i)
    except ValueError as e:
        reason = getattr(e, "msg", str(e))
        if i < len(s) and s[i] == "[":
            return _array(s, i + 1)
        if i < len(s) and s[i] == "{":
            return _object(s, i + 1)
        raise _Broken(None, i, reason) from None


def _array(s: str, i: int) -> tuple[Any, int]:
    items: list[Any] = []
    i = _ws(s, i)
    if i < len(s) and s[i] == "]":
        return items, i + 1
    while True:
        try:
            v, i = _value(s, i)
        except _Broken as b:
            if b.value is not None:
                items.append(b.value)
            raise _Broken(items, b.pos, b.reason) from None
        items.append(v)
        i = _ws(s, i)
        if i < len(s) and s[i] == ",":
            i += 1
        elif i < len(s) and s[i] == "]":
            return items, i + 1
        else:
            raise _Broken(items, i, "expected ',' or ']'")


def _object(s: str, i: int) -> tuple[Any, int]:
    obj: dict[str, Any] = {}
    i = _ws(s, i)
    if i < len(s) and s[i] == "}":
        return obj, i + 1
    while True:
        i = _ws(s, i)
        try:
            key, i = _DECODER.raw_decode(s, i)
        except ValueError:
            raise _Broken(obj, i, "expected a member name") from None
        i = _ws(s, i)
        if not isinstance(key, str) or i >= len(s) or s[i] != ":":
            raise _Broken(obj, i, "expected ':'")
        try:
            v, i = _value(s, i + 1)
        except _Broken as b:
            if b.value is not None:
                obj[key] = b.value
            raise _Broken(obj, b.pos, b.reason) from None
        obj[key] = v
        i = _ws(s, i)
        if i < len(s) and s[i] == ",":
            i += 1
        elif i < len(s) and s[i] == "}":
            return obj, i + 1
        else:
            raise _Broken(obj, i, "expected ',' or '}'")


def salvage(text: str) -> Salvaged | None:
    """Parse as much of the damaged JSON document `text` as reads; None when nothing does.

    Call it only once `json.loads` has failed: a valid document comes back
    whole, with `skipped_lines` 0, but at several times the cost.
    """
    start = _ws(text, 0)
    if start >= len(text) or text[start] not in "[{":
        return None
    try:
        value, end = _value(text, start)
        pos, reason = _ws(text, end), "extra data after the document"
        if pos >= len(text):
            return Salvaged(value, 0, 0, 0, "")
    except _Broken as b:
        value, pos, reason = b.value, b.pos, b.reason
    if value is None:
        return None
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    rest = text[text.rfind("\n", 0, pos) + 1 :]
    skipped = sum(1 for ln in rest.split("\n") if ln.strip())
    return Salvaged(value, line, column, skipped, reason)
