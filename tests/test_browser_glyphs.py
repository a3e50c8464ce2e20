"""Every icon reviewui draws renders in a browser's fonts when served (`reviewui serve`).

WGL4 below is the part of the WGL4 set reviewui may draw as it is: each of its
characters is in both Liberation Mono (Courier New's metric twin, the font
textual-serve's page falls back to) and DejaVu Sans Mono (checked with fc-list
when the set was written). Any other symbol or punctuation in reviewui's string
literals needs a fallback in BROWSER_FALLBACKS, of the same cell width, from WGL4.
"""

from __future__ import annotations

import ast
import unicodedata
from pathlib import Path

from rich.cells import cell_len

from reviewui.core.safe_text import picture
from reviewui.ui.browser_driver import BROWSER_FALLBACKS, BrowserDriver, browser_safe

PACKAGE = Path(__file__).resolve().parents[1] / "reviewui"

WGL4 = frozenset(
    [chr(c) for c in range(0x20, 0x7F)]
    + [chr(c) for c in range(0xA0, 0x100)]
    + [chr(c) for c in range(0x391, 0x3CA) if c != 0x3A2]
    + list("–—‘’“”•…‹›←↑→↓↔−√∞≈≠≤≥─│┌┐└┘├┤┬┴┼█▀▄▌▐░▒▓■□▲►▼◄○●◊")
)


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


def test_every_symbol_in_reviewuis_strings_is_in_wgl4_or_has_a_fallback() -> None:
    missing: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for ch in _drawn_literals(path):
            # Letters, marks, spaces and format characters are text (or tables of what to escape), not icons.
            if unicodedata.category(ch)[0] in "SP" and ch not in WGL4 and ch not in BROWSER_FALLBACKS:
                missing.setdefault(ch, str(path.relative_to(PACKAGE)))
    assert not missing, {f"{ch} U+{ord(ch):04X}": where for ch, where in missing.items()}


def test_each_fallback_is_in_wgl4_and_as_wide_as_its_icon() -> None:
    for icon, fallback in BROWSER_FALLBACKS.items():
        assert set(fallback) <= WGL4, (icon, fallback)
        assert icon not in WGL4, icon  # a fallback for a character every font has would only lose it
        assert cell_len(fallback) == cell_len(icon), (icon, fallback)


def test_control_and_invisible_characters_made_visible_stay_visible_in_the_browser() -> None:
    # The diff draws a hostile character as one picture (␛, ␦, ␡, U+FFFD): each stays one marked cell.
    shown = browser_safe(picture("a\x00b\x1bc\u202ed\u200be\x7ff\x85"))
    assert set(shown) <= WGL4, shown
    assert shown == "a¤b¤c¤d¤e¤f¿", shown


def test_the_driver_writes_the_fallbacks() -> None:
    written: list[bytes] = []
    driver = BrowserDriver.__new__(BrowserDriver)  # only write() is exercised: no app, no stdout
    driver._write = written.append  # type: ignore[attr-defined]
    driver.write("\x1b[1m✗ 💬 note ●\x1b[0m")
    assert written == [b"D" + len("\x1b[1m× »  note ●\x1b[0m".encode()).to_bytes(4, "big") + "\x1b[1m× »  note ●\x1b[0m".encode()]
