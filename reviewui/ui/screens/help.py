"""HelpScreen: every key binding of the review, generated from the bindings themselves."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Static


def binding_rows(screen: Screen) -> list[tuple[str, str]]:
    """(key, description) for every binding reachable on `screen`, deduplicated."""
    seen: set[str] = set()
    rows: list[tuple[str, str]] = []
    nodes = [screen.app, screen, *screen.query("*")]
    for node in nodes:
        if not type(node).__module__.startswith("reviewui."):
            continue  # Textual's own widgets' keys (scrolling, selecting) are not ours to list
        for binding in getattr(node, "BINDINGS", []):
            if not isinstance(binding, Binding):
                continue
            if binding.action in seen or not binding.description:
                continue
            seen.add(binding.action)
            keys = binding.key_display or ", ".join(
                screen.app.get_key_display(Binding(k.strip(), "")) for k in binding.key.split(",")
            )
            keys = keys.replace("question_mark", "?")
            rows.append((keys, binding.tooltip or binding.description))
    return rows


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
        for key, what in binding_rows(self.under):
            lines.append(Content.assemble((f"{key:>12}", "bold"), "  ", what))
        lines.append(Content(""))
        lines.append(Content.assemble(("ctrl+p opens the command palette: every action and the theme.", "$text-muted")))
        with VerticalScroll():
            yield Static(Content("\n").join(lines), id="help-text")
