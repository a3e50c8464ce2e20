"""Every key binding reviewui declares on a screen, for the help screen and the command palette."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.dom import DOMNode
from textual.screen import Screen


@dataclass(frozen=True)
class KeyAction:
    """One binding and the node whose action it runs."""

    keys: str
    description: str
    id: str | None
    """The binding id a user keymap rebinds it by (None for a binding without one)."""
    help: str
    action: str
    node: DOMNode


def key_actions(screen: Screen) -> list[KeyAction]:
    """Bindings of reviewui's own app, screen and widgets (merged over their classes), deduplicated.

    The keys are the ones in force: the app's keymap (the reviewer's own keys) applied.
    """
    seen: set[str] = set()
    keymap = screen.app._keymap
    rows: list[KeyAction] = []
    for node in (screen.app, screen, *screen.query("*")):
        if not type(node).__module__.startswith("reviewui."):
            continue  # Textual's own widgets' keys (scrolling, selecting) are not ours to list
        by_action: dict[str, list[Binding]] = {}
        bindings_map = node._bindings.copy()
        if keymap:
            bindings_map.apply_keymap(keymap)
        for binding_list in bindings_map.key_to_bindings.values():
            for b in binding_list:
                by_action.setdefault(b.action, []).append(b)
        for action, bindings in by_action.items():
            b = bindings[0]
            if action in seen or not b.description:
                continue
            seen.add(action)
            keys = b.key_display or ", ".join(
                sorted({screen.app.get_key_display(Binding(x.key, "")) for x in bindings}, key=len)
            )
            rows.append(KeyAction(keys, b.description, b.id, b.tooltip or b.description, action, node))
    return rows
