"""KeyFooter: the active keys of the screen, drawn as one line of text.

Textual's Footer builds a widget per key (about twenty on the review
screen) and builds them again on every focus change; on the first paint
that was a sixth of the time to open a branch. This draws the same keys,
in the same order and style, as one widget: keys that do not fit are left
off (the help screen lists them all), a key is clicked like a button, and
hovering one shows its tooltip.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.actions import parse as parse_action
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget


@dataclass(frozen=True)
class FooterEntry:
    """One key as the footer shows it."""

    key: str
    display: str
    action: str
    description: str
    enabled: bool
    tooltip: str


PINNED_ACTIONS = frozenset({"help", "app.help"})
"""Actions whose key stays in the footer at any width (drawn on the right, beside the palette's)."""


class KeyFooter(Widget):
    """One line of the keys the focused screen offers, palette key on the right."""

    ALLOW_SELECT = False
    DEFAULT_CSS = """
    KeyFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._spans: list[tuple[int, int, FooterEntry]] = []

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        self.refresh()

    def entries(self) -> tuple[list[FooterEntry], FooterEntry | None]:
        """The shown keys in binding order (one per action), and the command palette's key."""
        app = self.app
        active = self.screen.active_bindings
        seen: set[str] = set()
        shown: list[FooterEntry] = []
        for _, binding, enabled, tooltip in active.values():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            shown.append(FooterEntry(binding.key, app.get_key_display(binding), binding.action,
                                     binding.description, enabled, tooltip or binding.description))
        palette = None
        if app.ENABLE_COMMAND_PALETTE and app.COMMAND_PALETTE_BINDING in active:
            _, binding, enabled, tooltip = active[app.COMMAND_PALETTE_BINDING]
            palette = FooterEntry(binding.key, app.get_key_display(binding), binding.action,
                                  binding.description, enabled, tooltip or binding.description)
        return shown, palette

    @staticmethod
    def _piece(entry: FooterEntry, compact: bool = False) -> Content:
        key_style = "bold $footer-key-foreground" + ("" if entry.enabled else " dim")
        text_style = "$footer-description-foreground" + ("" if entry.enabled else " dim")
        if compact:
            return Content.assemble((entry.display, key_style), (f" {entry.description} ", text_style))
        return Content.assemble((f" {entry.display} ", key_style), (f"{entry.description} ", text_style))

    def render(self) -> Content:
        width = self.size.width
        shown, palette = self.entries()
        # Help is never the key that gives way: it is where every other key is listed.
        pinned = [e for e in shown if e.action in PINNED_ACTIONS]
        shown = [e for e in shown if e.action not in PINNED_ACTIONS]
        right = Content()
        right_entries: list[tuple[int, int, FooterEntry]] = []
        for entry in pinned:
            piece = self._piece(entry)
            right_entries.append((right.cell_length, right.cell_length + piece.cell_length, entry))
            right += piece
        if palette is not None:
            piece = Content.assemble(("▏", "$foreground 20%"), self._piece(palette, compact=True))
            right_entries.append((right.cell_length + 1, right.cell_length + piece.cell_length, palette))
            right += piece
        room = width - right.cell_length
        spans: list[tuple[int, int, FooterEntry]] = []
        left = Content()
        for entry in shown:
            piece = self._piece(entry)
            if left.cell_length + piece.cell_length > room:
                break  # whole keys only; the help screen lists every key
            spans.append((left.cell_length, left.cell_length + piece.cell_length, entry))
            left += piece
        start = max(room, left.cell_length)
        spans += [(start + a, start + b, e) for a, b, e in right_entries]
        self._spans = spans
        return left.pad_right(max(0, room - left.cell_length)) + right

    def entry_at(self, x: int) -> FooterEntry | None:
        """The key drawn at column `x`, or None."""
        for start, end, entry in self._spans:
            if start <= x < end:
                return entry
        return None

    def on_click(self, event: events.Click) -> None:
        entry = self.entry_at(event.x)
        if entry is None:
            return
        if entry.enabled:
            self.app.simulate_key(entry.key)
        else:
            self.app.bell()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        entry = self.entry_at(event.x)
        self.tooltip = entry.tooltip if entry is not None else None


class ModalFooter(KeyFooter):
    """A dialog's footer: the dialog's own keys, even while an input in it has the focus.

    Textual's active bindings put the focused input's keys (enter, escape …) over
    the dialog's, and the input's are not shown: the dialog's keys are listed from
    its own bindings instead, greyed out or left off as its `check_action` says.
    """

    def entries(self) -> tuple[list[FooterEntry], FooterEntry | None]:
        screen = self.screen
        app = self.app
        bindings = screen._bindings.copy()
        if app._keymap:
            bindings.apply_keymap(app._keymap)
        seen: set[str] = set()
        shown: list[FooterEntry] = []
        for binding_list in bindings.key_to_bindings.values():
            for b in binding_list:
                if not b.show or not b.description or b.action in seen:
                    continue
                _, name, params = parse_action(b.action)
                state = screen.check_action(name, params)
                if state is False:
                    continue
                seen.add(b.action)
                display = b.key_display or app.get_key_display(b)
                shown.append(FooterEntry(b.key, display, b.action, b.description, state is True,
                                         b.tooltip or b.description))
        if "help" not in seen and not any(b.action == "dismiss" and "question_mark" in b.key
                                          for bs in bindings.key_to_bindings.values() for b in bs):
            shown += self._app_help()
        return shown, None

    def _app_help(self) -> list[FooterEntry]:
        """The app's help key, as this dialog can take it: `f1` while a text field takes `?` as a character."""
        from textual.widgets import Input, TextArea  # dialogs only: not on the first screen

        app = self.app
        bindings = app._bindings.copy()
        if app._keymap:
            bindings.apply_keymap(app._keymap)
        keys = [b.key for bs in bindings.key_to_bindings.values() for b in bs if b.action == "help"]
        if not keys:
            return []
        typing = isinstance(self.screen.focused, (Input, TextArea))
        key = next((k for k in keys if k != "question_mark"), keys[0]) if typing else keys[0]
        display = app.get_key_display(Binding(key, ""))
        return [FooterEntry(key, display, "help", "Help", True, "Every key of every view, this dialog's first")]
