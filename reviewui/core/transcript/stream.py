"""The JSON contract of `reviewui transcript FILE --format json`, written turn by turn.

Building the whole document and dumping it keeps two extra copies of every
turn's text in memory (the dict tree and the JSON string); on a 100 MB
session that is most of the command's footprint. Here each turn is encoded
and written on its own, one turn per line, so memory stays at the
transcript's own size. The output is the same JSON value as
`Transcript.to_json()` (plus any `extra` top-level keys).
"""

from __future__ import annotations

import gc
import json
from json.encoder import encode_basestring_ascii
from typing import Any, Callable

from reviewui.core.transcript.model import Command, FileEdit, Transcript, Turn

_BATCH = 32
"""Turns encoded per write: small enough that memory stays at the transcript's own size."""

# ASCII escapes: the same JSON value, and the fastest encoder. No cycle check: the values are trees.
_ENCODE = json.JSONEncoder(check_circular=False).encode


def _word(v: str) -> str:
    """The JSON of a string from a small vocabulary (role, stop, kind), encoded once."""
    out = _WORDS.get(v)
    if out is None:
        out = _WORDS[v] = encode_basestring_ascii(v)
    return out


def _flags(flags: tuple[str, ...]) -> str:
    """The JSON of a turn's flags: few combinations occur, each encoded once."""
    out = _FLAG_SETS.get(flags)
    if out is None:
        out = _FLAG_SETS[flags] = _ENCODE(list(flags))
    return out


_WORDS: dict[str, str] = {}
_FLAG_SETS: dict[tuple[str, ...], str] = {}


def _turn_json(t: Turn) -> str:
    """`_ENCODE(t.to_json())`, without building the dict: the text fields are most of a turn's cost."""
    u = t.usage
    enc = encode_basestring_ascii
    text = enc(t.text) if t.text else _EMPTY
    reasoning = enc(t.reasoning) if t.reasoning else _EMPTY
    written = "[" + ", ".join([enc(p) for p in t.files_written]) + "]" if t.files_written else "[]"
    if not t.edits and not t.commands and t.kind is None and t.note is None:
        tail = _TAIL  # most turns: built once
    else:
        tail = (f'"edits": {_edits(t.edits) if t.edits else "[]"}, '
                f'"commands": {_commands(t.commands) if t.commands else "[]"}, '
                f'"kind": {"null" if t.kind is None else _word(t.kind)}, '
                f'"note": {"null" if t.note is None else enc(t.note)}}}')
    return (
        f'{{"index": {t.index}, "role": {_word(t.role)}, '
        f'"text": {text}, "reasoning": {reasoning}, '
        f'"reasoning_chars": {t.reasoning_chars}, '
        f'"tool_calls": {_calls(t) if t.tool_calls else "[]"}, '
        f'"files_written": {written}, '
        f'"stop": {_word(t.stop)}, '
        f'"usage": {{"input": {u.input}, "cached": {u.cached}, "output": {u.output}}}, '
        f'"flags": {_flags(t.flags) if t.flags else "[]"}, '
        f'"group": {"null" if t.group is None else enc(t.group)}, '
        f'"time": {"null" if t.time is None else enc(t.time)}, {tail}'
    )


_TAIL = '"edits": [], "commands": [], "kind": null, "note": null}'
"""The end of most turns' JSON (no edit, no command, no kind, no note), built once."""


_EMPTY = '""'


def _calls(t: Turn) -> str:
    """`_ENCODE([c.to_json() for c in t.tool_calls])` without the dicts."""
    enc = encode_basestring_ascii
    # Lists, not generators, for join: it would build the list anyway, and a generator costs
    # more per item (most turns have one call with one path).
    return "[" + ", ".join([
        f'{{"name": {enc(c.name)}, "kind": {_word(c.kind)}, "paths": [{", ".join([enc(p) for p in c.paths])}]}}'
        for c in t.tool_calls
    ]) + "]"


def _str_or_null(v: str | None) -> str:
    return "null" if v is None else encode_basestring_ascii(v)


def _edits(edits: tuple[FileEdit, ...]) -> str:
    """`_ENCODE([edit_json(e) for e in edits])` without the dicts: an edit's old and new text is most of a turn."""
    enc = encode_basestring_ascii
    return "[" + ", ".join([
        f'{{"file": {enc(e.path)}, "patch": {enc(e.patch)}}}' if e.patch is not None
        else f'{{"file": {enc(e.path)}, "old": {_str_or_null(e.old)}, "new": {_str_or_null(e.new)}}}'
        for e in edits
    ]) + "]"


def _commands(cmds: tuple[Command, ...]) -> str:
    """`_ENCODE([c.to_json() for c in cmds])` without the dicts."""
    return "[" + ", ".join([
        f'{{"command": {encode_basestring_ascii(c.command)}, "exit": {"null" if c.exit is None else int(c.exit)}, '
        f'"output_head": {_str_or_null(c.output_head)}}}'
        for c in cmds
    ]) + "]"


def write_json(t: Transcript, write: Callable[[str], Any], extra: dict[str, Any] | None = None) -> None:
    """Write `t` as the contract's JSON object through `write`, one turn per line, then `extra`'s keys."""
    # Loading paused the cyclic collector (see loading.py), so the first collections after it
    # would walk every object the load made, and again as they age: writing allocates enough
    # to set them off (a sixth of the writing of a 100 MB session) and makes no cycle itself.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        _write(t, write, extra)
    finally:
        if was_enabled:
            gc.enable()


def _write(t: Transcript, write: Callable[[str], Any], extra: dict[str, Any] | None) -> None:
    write('{"format": ' + _ENCODE(t.format) + ',\n"turns": [\n')
    turns = t.turns
    for start in range(0, len(turns), _BATCH):  # a few turns per write: fewer calls, no copy of each turn
        write((",\n" if start else "") + ",\n".join([_turn_json(x) for x in turns[start : start + _BATCH]]))
    write("\n],\n")
    tail: dict[str, Any] = {"skipped_lines": t.skipped_lines, "notes": list(t.notes)}
    if extra:
        tail.update(extra)
    write(",\n".join(f"{_ENCODE(k)}: {_ENCODE(v)}" for k, v in tail.items()))
    write("\n}\n")
