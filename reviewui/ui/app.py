"""ReviewApp: the Textual application, handed a ReviewSession by `make_app`.

The CLI and the tests build the app the same way, through `make_app`.
Themes come from theme files; the chosen one is remembered in the user's
config dir. The command palette offers every action of the current screen.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from reviewui.core.config import load_user_prefs, save_user_pref
from reviewui.core.errors import ReviewError
from reviewui.core.session import ReviewSession
from reviewui.ui.keymap import binding_ids, keymap_from_prefs
from reviewui.ui.screens.no_changes import NoChangesScreen
from reviewui.ui.screens.review import ReviewScreen
from reviewui.ui.widgets.diff_view import DiffView
from reviewui.ui.themes import load_themes
from reviewui.ui.widgets.transcript_view import TranscriptView

DEFAULT_THEME = "reviewui-dark"


class ReviewApp(App[None]):
    """The review app for one branch."""

    TITLE = "reviewui"
    CSS_PATH = "screens/review.tcss"  # the review screen's (ids of that screen only)
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Quit reviewui"),
        Binding("tab", "app.focus_next", "Next pane", id="app.next_pane", show=False,
                tooltip="Move focus to the next pane"),
        # Every screen and dialog, the queue's too: a priority binding, since a dialog's keys shut out the app's
        # (a text field with the focus still takes `?` as a character: f1 opens help there).
        Binding("question_mark,f1", "help", "Help", id="app.help", priority=True,
                tooltip="Every key of every view, opened at the view in front"),
    ]

    def __init__(self, session: ReviewSession | None, initial_file: str | None = None, theme: str | None = None,
                 resume_gc: bool = False) -> None:
        super().__init__()
        self._resume_gc = resume_gc
        """The cyclic garbage collector was paused for the start-up: turn it back on after the first paint."""
        self.session = session
        self.initial_file = initial_file
        self._requested_theme = theme
        prefs = load_user_prefs()
        # Every view help knows has its ids checked (the probe editor's, the verdict dialog's …); that imports
        # every view, so only when the reviewer has a keymap at all.
        known = set() if "keymap" not in prefs else binding_ids(
            [*self.BINDINGS, *ReviewScreen.BINDINGS, *DiffView.BINDINGS, *TranscriptView.BINDINGS, *registered()])
        self.keymap, self.keymap_problems = keymap_from_prefs(prefs, known)
        """The reviewer's own keys from the user config (binding id -> keys)."""
        themes, self.theme_problems = load_themes()
        for t in themes:
            self.register_theme(t)
        wanted = theme or prefs.get("theme") or DEFAULT_THEME
        if wanted not in self.available_themes:
            if theme:
                self.theme_problems.append(f"unknown theme {wanted!r}; using {DEFAULT_THEME}")
            wanted = DEFAULT_THEME
        # Set before mounting: changing theme after the first paint restyles every widget.
        self.theme = wanted

    @property
    def review_session(self) -> ReviewSession:
        """The session of the branch this app was opened on (a queue app opens one per review)."""
        assert self.session is not None, "a queue app has no session of its own"
        return self.session

    _mounted_once = False
    """Set on mount: a theme set before then is the start-up choice, not the reviewer's.
    (Not `_running`: that name is Textual's own.)"""

    def on_mount(self) -> None:
        self._mounted_once = True
        for problem in self.theme_problems:
            self.notify(f"theme not loaded: {problem}", severity="warning")
        for problem in self.keymap_problems:
            self.notify(problem, severity="warning")
        if self.keymap:
            self.set_keymap(self.keymap)
        if self._resume_gc:
            self.call_after_refresh(gc.enable)

    def get_default_screen(self) -> Screen:
        # The review is the app's first screen itself, not pushed over Textual's blank
        # one from on_mount: a screen pushed there is laid out and rendered once while
        # the app's start-up still holds its repaints back, and that render is thrown away.
        session = self.review_session
        if session.target.is_empty or not session.diff.files:
            return NoChangesScreen(session)
        return ReviewScreen(session, self.initial_file)

    def watch_theme(self, theme: str) -> None:
        if self._mounted_once and self._requested_theme != theme:
            save_user_pref("theme", theme)

    def action_help(self) -> None:
        """Open help over the screen in front, at its view's keys (help itself closes on `?`)."""
        from reviewui.ui.screens.help import open_help  # help imports every view: only when it opens

        open_help(self)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        from reviewui.ui.bindings import key_actions  # not at the top: only the palette needs it

        yield from super().get_system_commands(screen)
        for k in key_actions(screen):
            if k.action == "quit":
                continue  # Textual's own system commands already offer quitting
            yield SystemCommand(
                f"{k.description} ({k.keys})",
                k.help,
                lambda a=k.action, n=k.node: self.call_later(n.run_action, a),
            )


def registered() -> list[Binding]:
    """The bindings of every view help lists (see help_registry), for checking a keymap's ids."""
    from reviewui.ui.help_registry import VIEWS, own_bindings, view_class

    return [b for _, where in VIEWS for bs in own_bindings(view_class(where)).key_to_bindings.values() for b in bs]


def make_app(session: ReviewSession, initial_file: str | None = None, theme: str | None = None,
             resume_gc: bool = False) -> ReviewApp:
    """Build the app for `session` (the one factory the CLI and tests share)."""
    return ReviewApp(session, initial_file=initial_file, theme=theme, resume_gc=resume_gc)


NO_TERMINAL = ("the review app needs a terminal, and stdin or stdout is not one; without a terminal use "
               "the headless commands: reviewui check, reviewui bite, reviewui log (reviewui demo --no-open "
               "builds the demo)")
"""What `reviewui`, `reviewui BRANCH` and `reviewui demo` say, in one line, when there is no terminal."""


def require_terminal() -> None:
    """Refuse to start the full-screen app without a terminal on both stdin and stdout.

    Drawn into a redirected stdout the app is garbage in a file, and piped input
    would become keystrokes (an `echo y |` approving a branch). An app drawn by
    another Textual driver (`TEXTUAL_DRIVER`, as under `textual-serve`) needs no
    terminal. Raises ReviewError.
    """
    if os.environ.get("TEXTUAL_DRIVER"):
        return  # another driver draws the app (textual-serve's web driver talks over pipes, not to a terminal)
    if not (sys.stdin is not None and sys.stdin.isatty() and sys.stdout is not None and sys.stdout.isatty()):
        raise ReviewError(NO_TERMINAL)


def run_app(session: ReviewSession, initial_file: str | None = None, theme: str | None = None) -> None:
    """Run the app in the terminal until the reviewer quits.

    When the caller paused the cyclic garbage collector for the start-up (see
    `reviewui.cli.cmd_open`), the app turns it back on once the first screen is drawn.
    Raises ReviewError when the theme file the user named cannot be used, or
    when stdin or stdout is not a terminal (see `require_terminal`).
    """
    if theme is not None and not theme.strip():
        raise ReviewError("--theme needs a name")
    app = make_app(session, initial_file, theme, resume_gc=not gc.isenabled())
    if theme is not None and theme not in app.available_themes:
        # said before the screen takes over, with the names to pick from
        raise ReviewError(f"unknown theme {theme!r}; choose from: {', '.join(sorted(app.available_themes))}")
    require_terminal()  # after the reviewer's own mistakes: those are said first
    app.run()
