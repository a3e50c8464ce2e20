"""The reviewer's own keys: `[keymap]` in the user config, binding id -> keys.

```toml
# ~/.config/reviewui/config.toml
[keymap]
"review.bite" = "ctrl+b"
"review.next_hunk" = "j,down"
```

Every key of every view has an id (`<view>.<what>`: `review.bite`, `transcript.flagged`;
the motions every list shares are `cursor.*`); the app hands the map to
Textual's `App.set_keymap`, so the footer, the help and the palette show
the keys in force. An unknown id or a value that is not a key string is
reported and skipped, never fatal.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

from textual.binding import Binding

KEYS = re.compile(r"^[A-Za-z0-9_+\-]+(,[A-Za-z0-9_+\-]+)*$")
"""One or more Textual key names (`ctrl+b`, `question_mark`, `j,down`), comma-separated."""


def binding_ids(bindings: Iterable[Binding | tuple[str, ...]]) -> set[str]:
    """The ids of the given bindings (BINDINGS lists may hold tuples, which have none)."""
    return {b.id for b in bindings if isinstance(b, Binding) and b.id}


def keymap_from_prefs(prefs: Mapping[str, object], known: set[str]) -> tuple[dict[str, str], list[str]]:
    """The `[keymap]` table of the user's prefs as {binding id: keys}, and one line per entry skipped."""
    table = prefs.get("keymap")
    if table is None:
        return {}, []
    if not isinstance(table, dict):
        return {}, ["keymap: must be a table of binding id = \"keys\""]
    keymap: dict[str, str] = {}
    problems: list[str] = []
    for binding_id, keys in table.items():
        if binding_id not in known:
            problems.append(f"keymap: no binding has the id {binding_id!r}")
        elif not isinstance(keys, str) or not KEYS.match(keys.replace(" ", "")):
            problems.append(f"keymap: {binding_id} needs keys such as \"ctrl+b\", not {keys!r}")
        else:
            keymap[binding_id] = keys.replace(" ", "")
    return keymap, problems
