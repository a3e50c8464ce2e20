"""HelpScreen: every key of every view and dialog, generated from their bindings (see help_registry)."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from reviewui.core.config import user_config_dir
from reviewui.ui.bindings import key_actions
from reviewui.ui.widgets.hanging import HangingLines, Row
from reviewui.ui.widgets.key_footer import ModalFooter


GROUP_NAMES = {
    "ReviewApp": "Anywhere",
    "ReviewScreen": "Review",
    "DiffView": "Diff",
    "FileList": "File list",
    "TranscriptView": "Transcript",
    "FixturesPane": "Fixtures pane",
    "ResultsPanel": "Results panel",
}
"""The view each binding's owner stands for; other owners are named after their class."""


def binding_rows(screen: Screen) -> list[tuple[str, str, str]]:
    """(keys in force, what it does, binding id or "") for every binding reachable on `screen`."""
    return [(k.keys, k.help, k.id or "") for k in key_actions(screen)]


def help_groups(screen: Screen) -> list[tuple[str, list[tuple[str, str]]]]:
    """The keys of `screen` grouped by the view they act in: [(view, [(key, what)])], no key twice in a view.

    Views hidden right now (the transcript while the diff shows, say) are left
    out. (The help screen lists every view's keys instead: `help_registry`.)

    A key bound twice in one view (a widget's own binding over one it
    inherits, say) is listed once, with the first meaning: the one it has.
    """
    groups: dict[str, list[tuple[str, str]]] = {}
    taken: dict[str, set[str]] = {}
    for k in key_actions(screen):
        if not _shown(k.node):
            continue  # a hidden view's keys do nothing useful now: not listed
        name = type(k.node).__name__
        view = GROUP_NAMES.get(name, name)
        keys = {x.strip() for x in k.keys.split(",")}
        if keys & taken.setdefault(view, set()):
            continue
        taken[view] |= keys
        groups.setdefault(view, []).append((k.keys, k.help))
    return list(groups.items())


def _shown(node: object) -> bool:
    while node is not None and not isinstance(node, Screen):
        if getattr(node, "display", True) is False:
            return False
        node = getattr(node, "parent", None)
    return True


def open_help(app: App[Any]) -> None:
    """Help over the screen in front, at the keys of the view in front (on help itself: close it)."""
    from reviewui.ui.help_registry import current_view

    if isinstance(app.screen, HelpScreen):
        app.screen.dismiss()
        return
    app.push_screen(HelpScreen(app.screen, current_view(app.screen)))


class HelpScreen(ModalScreen[None]):
    """Every key of every view and dialog (from the registry in `help_registry`), opened at the view in front.

    escape, q or ? closes it.
    """

    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss", "Close help", id="help.close"),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90; max-width: 100%; height: 1fr; max-height: 90%;
        background: $panel; border: round $accent; padding: 0 2;
    }
    """

    def __init__(self, under: Screen, section: str | None = None) -> None:
        super().__init__()
        self.under = under
        self.section = section
        """The view whose keys help opens at (None: the top)."""
        self._before: dict[str, HangingLines] = {}
        """View name -> the help text above its title (its height is where the view's section starts)."""

    def compose(self) -> ComposeResult:
        from reviewui.ui.help_registry import help_views  # imports every view: only when help opens

        rows: list[Row] = [Content.assemble(("Keys, by the view they act in", "bold $accent"))]
        for view, keys in help_views(self.app):
            rows.append(Content(""))
            self._before[view] = HangingLines(list(rows))
            rows.append(Content.assemble((view, "bold $accent")))
            for k in keys:  # the id is the name to rebind it by in [keymap]; a long one wraps beside its key
                rows.append((Content.assemble((f"{k.keys:>12}", "bold"), "  "),
                             Content.assemble(k.help, (f"  {k.id}", "$text-muted"))))
        rows.append(Content(""))
        rows.append(Content.assemble((f"Your own keys: [keymap] in {user_config_dir() / 'config.toml'}, "
                                      'e.g. "review.bite" = "ctrl+b".', "$text-muted")))
        rows.append(Content.assemble(("ctrl+p opens the command palette: every action and the theme.", "$text-muted")))
        with VerticalScroll():
            yield Static(HangingLines(rows), id="help-text")
        yield ModalFooter()

    def on_mount(self) -> None:
        self.call_after_refresh(self.scroll_to_section)

    def section_line(self, view: str) -> int | None:
        """The line of the help text where `view`'s title is drawn at its width now (None: not listed)."""
        before = self._before.get(view)
        if before is None:
            return None
        text = self.query_one("#help-text", Static)
        return before.get_height({}, text.content_region.width or 1)  # the Static's rules are the defaults

    def scroll_to_section(self) -> None:
        """Scroll so that the section of the view in front starts at the top (as far as the text goes)."""
        y = self.section_line(self.section) if self.section else None
        if y is not None:
            self.query_one(VerticalScroll).scroll_to(y=y, animate=False, immediate=True)
