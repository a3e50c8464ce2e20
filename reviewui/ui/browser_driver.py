"""The Textual driver `reviewui serve` runs the app with: textual-serve's web driver, a few icons swapped.

The served page draws the terminal (xterm.js) in the DejaVu Sans Mono this package
bundles (`serve_page/fonts`, see serve.py), whatever fonts the browser's machine has.
It covers every icon reviewui draws (⏎ ⚑ ✗ ✓ ● ○ ↳ ▾, box drawing, Textual's
scrollbar eighths) but the few below, which the browser would take from another
font or draw as an empty box (💬 had no font at all in headless Chromium): those are
replaced by a fallback of the same width that the font has. The terminal keeps the
original glyphs.
"""

from __future__ import annotations

from textual.drivers.web_driver import WebDriver

BROWSER_FALLBACKS: dict[str, str] = {
    "💬": "» ",  # a comment (two cells wide, so two narrow ones)
    **{chr(0x2400 + c): "¤" for c in range(0x20)},  # ␀ … ␟: a control character made visible (safe_text)
    "\u2421": "¤",  # ␡
    "\u2426": "¤",  # ␦: a bidi, invisible or format character made visible (safe_text)
}
"""Each icon reviewui draws that the bundled font lacks, and what the browser shows instead (same cell width).

tests/test_browser_glyphs.py reads the font's own table: an icon added to reviewui's
strings that the font lacks, and has no fallback here, fails there.
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
