"""The JSON contract of `reviewui transcript FILE --format json`, written turn by turn.

Building the whole document and dumping it keeps two extra copies of every
turn's text in memory (the dict tree and the JSON string); on a 100 MB
session that is most of the command's footprint. Here each turn is encoded
and written on its own, one turn per line, so memory stays at the
transcript's own size. The output is the same JSON value as
`Transcript.to_json()` (plus any `extra` top-level keys).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any, Callable

from reviewui.core.transcript.model import Transcript, Turn, edit_json

# ASCII escapes: the same JSON value, and the fastest encoder. No cycle check: the values are trees.
_ENCODE = json.JSONEncoder(check_circular=False).encode


def _turn_json(t: Turn) -> str:
    """`_ENCODE(t.to_json())`, without building the dict: the text fields are most of a turn's cost."""
    u = t.usage
    return (
        f'{{"index": {t.index}, "role": {encode_basestring_ascii(t.role)}, '
        f'"text": {encode_basestring_ascii(t.text)}, "reasoning": {encode_basestring_ascii(t.reasoning)}, '
        f'"reasoning_chars": {t.reasoning_chars}, '
        f'"tool_calls": {_ENCODE([c.to_json() for c in t.tool_calls]) if t.tool_calls else "[]"}, '
        f'"files_written": {_ENCODE(t.files_written) if t.files_written else "[]"}, '
        f'"stop": {encode_basestring_ascii(t.stop)}, '
        f'"usage": {{"input": {u.input}, "cached": {u.cached}, "output": {u.output}}}, '
        f'"flags": {_ENCODE(t.flags) if t.flags else "[]"}, '
        f'"group": {"null" if t.group is None else encode_basestring_ascii(t.group)}, '
        f'"time": {"null" if t.time is None else encode_basestring_ascii(t.time)}, '
        f'"edits": {_ENCODE([edit_json(e) for e in t.edits]) if t.edits else "[]"}, '
        f'"commands": {_ENCODE([c.to_json() for c in t.commands]) if t.commands else "[]"}, '
        f'"kind": {"null" if t.kind is None else encode_basestring_ascii(t.kind)}, '
        f'"note": {"null" if t.note is None else encode_basestring_ascii(t.note)}}}'
    )


def write_json(t: Transcript, write: Callable[[str], Any], extra: dict[str, Any] | None = None) -> None:
    """Write `t` as the contract's JSON object through `write`, one turn per line, then `extra`'s keys."""
    write('{"format": ' + _ENCODE(t.format) + ',\n"turns": [\n')
    first = True
    for turn in t.turns:
        write(("" if first else ",\n") + _turn_json(turn))
        first = False
    write("\n],\n")
    tail: dict[str, Any] = {"skipped_lines": t.skipped_lines, "notes": list(t.notes)}
    if extra:
        tail.update(extra)
    write(",\n".join(f"{_ENCODE(k)}: {_ENCODE(v)}" for k, v in tail.items()))
    write("\n}\n")
