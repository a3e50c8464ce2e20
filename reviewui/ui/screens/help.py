"""HelpScreen: every key binding of the review, generated from the bindings themselves."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from reviewui.core.config import user_config_dir
from reviewui.ui.bindings import key_actions


def binding_rows(screen: Screen) -> list[tuple[str, str, str]]:
    """(keys in force, what it does, binding id or "") for every binding reachable on `screen`."""
    return [(k.keys, k.help, k.id or "") for k in key_actions(screen)]


class HelpScreen(ModalScreen[None]):
    """A list of every key and what it does; any of escape, q or ? closes it."""

    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss", "Close help", show=False),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 80; max-width: 95%; height: 80%;
        background: $panel; border: round $accent; padding: 1 2;
    }
    """

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        lines: list[Content] = [Content.assemble(("Keys", "bold $accent"))]
        for key, what, binding_id in binding_rows(self.under):
            lines.append(Content.assemble((f"{key:>12}", "bold"), "  ", what,
                                          (f"  {binding_id}" if binding_id else "", "$text-muted")))
        lines.append(Content(""))
        lines.append(Content.assemble((f"Your own keys: [keymap] in {user_config_dir() / 'config.toml'}, "
                                       'e.g. "review.bite" = "ctrl+b".', "$text-muted")))
        lines.append(Content.assemble(("ctrl+p opens the command palette: every action and the theme.", "$text-muted")))
        with VerticalScroll():
            yield Static(Content("\n").join(lines), id="help-text")
