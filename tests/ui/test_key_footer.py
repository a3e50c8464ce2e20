"""KeyFooter: the active keys as one line, following focus, clickable."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widget import Widget

from reviewui.core.session import ReviewSession
from reviewui.ui.app import make_app
from reviewui.ui.widgets.key_footer import KeyFooter


class Pane(Widget, can_focus=True):
    DEFAULT_CSS = "Pane { height: 3; }"

    def __init__(self, name: str, bindings: list[Binding]) -> None:
        super().__init__(id=name)
        self._bindings_list = bindings
        for b in bindings:
            self._bindings.bind(b.key, b.action, b.description, show=b.show, key_display=b.key_display)


class FooterApp(App[None]):
    BINDINGS = [
        Binding("z", "zap", "Zap", tooltip="Zap everything"),
        Binding("h", "hidden", "Hidden", show=False),
        Binding("w", "wide", "A rather wide description"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.ran: list[str] = []

    def bell(self) -> None:
        self.ran.append("bell")

    def compose(self) -> ComposeResult:
        yield Pane("left", [Binding("l", "app.left", "Left only")])
        yield Pane("right", [Binding("r", "app.right", "Right only")])
        yield KeyFooter()

    def action_zap(self) -> None:
        self.ran.append("zap")

    def action_left(self) -> None:
        self.ran.append("left")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if action == "wide" else True  # None: shown, but disabled


def footer_text(app: App) -> str:
    """The footer line as drawn (the widget's render cache, not a fresh render)."""
    return app.screen.query_one(KeyFooter).render_line(0).text


async def test_footer_lists_shown_keys_in_order_and_follows_focus() -> None:
    app = FooterApp()
    async with app.run_test(size=(100, 10)) as pilot:
        app.query_one("#left").focus()
        await pilot.pause()
        text = footer_text(app)
        assert " l Left only " in text and "Right only" not in text
        assert text.index(" l Left only ") < text.index(" z Zap ") < text.index(" w A rather wide description ")
        assert "Hidden" not in text
        assert text.rstrip().endswith("^p palette")
        app.query_one("#right").focus()
        await pilot.pause()
        text = footer_text(app)
        assert " r Right only " in text and "Left only" not in text


async def test_keys_that_do_not_fit_are_left_off_whole_and_palette_stays() -> None:
    app = FooterApp()
    async with app.run_test(size=(40, 10)) as pilot:
        app.query_one("#left").focus()
        await pilot.pause()
        text = footer_text(app)
        assert len(text) == 40
        assert " z Zap " in text
        assert "wide" not in text  # left off whole, never cut mid-word
        assert text.rstrip().endswith("^p palette")


async def test_click_runs_the_key_and_disabled_key_does_not() -> None:
    app = FooterApp()
    async with app.run_test(size=(100, 10)) as pilot:
        app.query_one("#left").focus()
        await pilot.pause()
        footer = app.screen.query_one(KeyFooter)
        text = footer_text(app)
        await pilot.click(KeyFooter, offset=(text.index("Zap"), 0))
        await pilot.click(KeyFooter, offset=(text.index("Left only"), 0))
        await pilot.pause()
        assert app.ran == ["zap", "left"]
        wide = footer.entry_at(text.index("rather"))
        assert wide is not None and not wide.enabled
        await pilot.click(KeyFooter, offset=(text.index("rather"), 0))
        await pilot.pause()
        assert app.ran == ["zap", "left", "bell"]
        assert footer.entry_at(text.index("Zap")).tooltip == "Zap everything"


async def test_review_footer_leads_with_moving_keys(awkward_session: ReviewSession) -> None:
    app = make_app(awkward_session)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        keys = [e.display for e in app.screen.query_one(KeyFooter).entries()[0]]
        assert keys[:6] == ["n", "p", "]", "[", "s", "?"]
