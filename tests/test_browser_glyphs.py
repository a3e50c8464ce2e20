"""Every icon reviewui draws renders in the served terminal's font (`reviewui serve`).

The served page draws the terminal in the DejaVu Sans Mono reviewui bundles
(reviewui/ui/serve_page/fonts): FONT below is what that font has glyphs for, read
from its own cmap table. Any symbol or punctuation in reviewui's string literals
that the font lacks needs a fallback in BROWSER_FALLBACKS, of the same cell width,
that the font has.
"""

from __future__ import annotations

import ast
import unicodedata
from pathlib import Path

from rich.cells import cell_len

from reviewui.core.safe_text import picture
from reviewui.ui.browser_driver import BROWSER_FALLBACKS, BrowserDriver, browser_safe
from reviewui.ui.serve import PAGE
from tests.font_cmap import font_chars

PACKAGE = Path(__file__).resolve().parents[1] / "reviewui"

FONT = font_chars(PAGE / "fonts" / "DejaVuSansMono.ttf")
"""The characters the served terminal's font draws."""


def _drawn_literals(path: Path) -> str:
    """The characters of `path`'s string literals, docstrings left out (they are never drawn)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    return "".join(
        n.value for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
    )


def test_the_font_is_the_one_the_page_serves_and_has_the_icons_once_swapped() -> None:
    assert len(FONT) > 3000 and {"a", "─", "●"} <= FONT
    # these were swapped for ¶ and ! when the page drew in whatever font the browser had (issue 43)
    assert {"⏎", "⚑", "✗", "✓", "↳", "▾", "╭"} <= FONT
    assert not {"⏎", "⚑", "✗", "✓"} & set(BROWSER_FALLBACKS)


def test_every_symbol_in_reviewuis_strings_is_in_the_font_or_has_a_fallback() -> None:
    missing: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for ch in _drawn_literals(path):
            # Letters, marks, spaces and format characters are text (or tables of what to escape), not icons.
            if unicodedata.category(ch)[0] in "SP" and ch not in FONT and ch not in BROWSER_FALLBACKS:
                missing.setdefault(ch, str(path.relative_to(PACKAGE)))
    assert not missing, {f"{ch} U+{ord(ch):04X}": where for ch, where in missing.items()}


def test_each_fallback_is_in_the_font_and_as_wide_as_its_icon() -> None:
    for icon, fallback in BROWSER_FALLBACKS.items():
        assert set(fallback) <= FONT, (icon, fallback)
        assert icon not in FONT, icon  # a fallback for a character the font has would only lose it
        assert cell_len(fallback) == cell_len(icon), (icon, fallback)


def test_control_and_invisible_characters_made_visible_stay_visible_in_the_browser() -> None:
    # The diff draws a hostile character as one picture (␛, ␦, ␡, U+FFFD): each stays one marked cell.
    shown = browser_safe(picture("a\x00b\x1bc\u202ed\u200be\x7ff\x85"))
    assert set(shown) <= FONT, shown
    assert shown == "a¤b¤c¤d¤e¤f\ufffd", shown


def test_the_driver_writes_the_fallbacks() -> None:
    written: list[bytes] = []
    driver = BrowserDriver.__new__(BrowserDriver)  # only write() is exercised: no app, no stdout
    driver._write = written.append  # type: ignore[attr-defined]
    driver.write("\x1b[1m✗ 💬 note ⏎ ●\x1b[0m")
    shown = "\x1b[1m✗ »  note ⏎ ●\x1b[0m"
    assert written == [b"D" + len(shown.encode()).to_bytes(4, "big") + shown.encode()]
