"""The Textual driver `reviewui serve` runs the app with: textual-serve's web driver, icons swapped.

A browser draws the terminal (xterm.js) in the fonts of the machine it runs on:
textual-serve asks for 'Roboto Mono', Monaco, 'Courier New', monospace, which on
a machine without Roboto Mono is Courier New or its metric twin Liberation Mono.
Those cover WGL4 (Latin-1, box drawing's plain lines, ● ○ ► ▼ √ → …) and little
else, so an icon outside it is an empty box or a guess from another font (💬 was
a box in headless Chromium: no emoji font). In the browser every such icon the
app draws is replaced by its fallback below, one of the same width from WGL4;
the terminal keeps the original glyphs.
"""

from __future__ import annotations

from textual.drivers.web_driver import WebDriver

BROWSER_FALLBACKS: dict[str, str] = {
    "✗": "×",  # a broken guard or hunk, a failed probe test
    "✓": "√",  # reviewed, a passed probe test
    "✎": "±",  # an edit in a transcript turn
    "⚠": "!",  # a fixture no changed test calls
    "⚑": "!",  # the findings count in the file list
    "↳": "└",  # a subagent's turn
    "▾": "▼",  # an open group
    "▸": "►",  # a closed group
    "▏": "│",  # the transcript's turn edge
    "💬": "» ",  # a comment (two cells wide, so two narrow ones)
    "⏎": "¶",  # a newline inside an Aider input
    "\ufffd": "¿",  # bytes that are not UTF-8
    **{chr(0x2400 + c): "¤" for c in range(0x20)},  # ␀ … ␟: a control character made visible (safe_text)
    "\u2421": "¤",  # ␡
    "\u2426": "¤",  # ␦: a bidi, invisible or format character made visible (safe_text)
    # Textual's own: scrollbar thumbs in eighths, rounded and heavy borders.
    **dict.fromkeys("▁▂▃▅", "▄"), **dict.fromkeys("▆▇▉▊", "█"), **dict.fromkeys("▋▍▎", "▌"),
    "▕": "▐", "╭": "┌", "╮": "┐", "╰": "└", "╯": "┘", "━": "─", "┃": "│",
}
"""Each icon outside WGL4 that reviewui draws, and what the browser shows instead (same cell width).

WGL4 is the set Courier New, Liberation Mono, DejaVu Sans Mono, Menlo and Consolas
all cover, so the fallbacks draw whichever of them the browser's machine has.
"""

_TABLE = str.maketrans(BROWSER_FALLBACKS)


def browser_safe(text: str) -> str:
    """`text` with every icon of BROWSER_FALLBACKS replaced by its fallback."""
    return text.translate(_TABLE)


class BrowserDriver(WebDriver):
    """textual-serve's web driver, writing browser-safe icons."""

    def write(self, data: str) -> None:
        """Write `data` to textual-serve with its icons made browser-safe."""
        super().write(data.translate(_TABLE))
