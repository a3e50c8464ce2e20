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
from typing import Any, Callable

from reviewui.core.transcript.model import Transcript

_ENCODE = json.JSONEncoder().encode  # ASCII escapes: the same JSON value, and the fastest encoder


def write_json(t: Transcript, write: Callable[[str], Any], extra: dict[str, Any] | None = None) -> None:
    """Write `t` as the contract's JSON object through `write`, one turn per line, then `extra`'s keys."""
    write('{"format": ' + _ENCODE(t.format) + ',\n"turns": [\n')
    first = True
    for turn in t.turns:
        write(("" if first else ",\n") + _ENCODE(turn.to_json()))
        first = False
    write("\n],\n")
    tail: dict[str, Any] = {"skipped_lines": t.skipped_lines, "notes": list(t.notes)}
    if extra:
        tail.update(extra)
    write(",\n".join(f"{_ENCODE(k)}: {_ENCODE(v)}" for k, v in tail.items()))
    write("\n}\n")
