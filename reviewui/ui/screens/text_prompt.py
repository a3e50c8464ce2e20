"""TextPromptModal: one line of text from the reviewer (a hunk comment, say)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from reviewui.ui.widgets.key_footer import ModalFooter


class TextPromptModal(ModalScreen[str | None]):
    """Ask for one line; enter returns it, escape returns None."""

    BINDINGS = [
        Binding("enter", "submit", "Save", id="prompt.save", tooltip="Save what you typed"),
        Binding("escape", "cancel", "Cancel", id="prompt.cancel", tooltip="Close without saving"),
    ]

    DEFAULT_CSS = """
    TextPromptModal { align: center middle; }
    TextPromptModal > Vertical {
        width: 90; max-width: 95%; height: auto; padding: 1 2;
        background: $panel; border: round $accent;
    }
    TextPromptModal #prompt-title { text-style: bold; margin-bottom: 1; }
    """

    def __init__(self, title: str, placeholder: str = "", value: str = "", allow_empty: bool = False) -> None:
        super().__init__()
        self.allow_empty = allow_empty
        """Enter on an empty line returns "" (e.g. to delete), not None."""
        self.title_text = title
        self.placeholder = placeholder
        self.value = value
        """Text the input starts with (enter accepts it as it is)."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Content(self.title_text), id="prompt-title")
            yield Input(self.value, placeholder=self.placeholder, id="prompt-input")
        yield ModalFooter()

    @on(Input.Submitted, "#prompt-input")
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        self.dismiss(text if text or self.allow_empty else None)

    async def action_submit(self) -> None:
        """Save the line (enter in the input does the same)."""
        await self.query_one("#prompt-input", Input).action_submit()

    def action_cancel(self) -> None:
        self.dismiss(None)
