"""Make text from the repository, a run, a transcript or a note safe to draw or print.

Agent-controlled text (file names, test output, commit messages, notes,
transcripts) can carry terminal escape sequences (OSC 52 writes the
clipboard, OSC 0 sets the window title) and bidirectional or invisible
characters that make code read differently from how it runs (Trojan
Source). `visible` is the one function every front end routes such text
through before it reaches a terminal: control characters become `\\x1b`
escapes, bidi and invisible characters `\\u202e` (Python's escape notation).
"""

from __future__ import annotations

import functools
import unicodedata

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Characters that change the display order of text (the Trojan Source set)."""

INVISIBLES = frozenset(
    "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200d\u2028\u2029\u2060\u2061\u2062\u2063\u2064"
    "\u206a\u206b\u206c\u206d\u206e\u206f\u3164\ufeff\uffa0\ufff9\ufffa\ufffb"
)
"""Characters that take no visible space or break lines invisibly."""

_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u17b4\u17b5")
"""Letters (so `isprintable`) that draw as blank space: used to fake identifiers."""

_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Controls, format characters (bidi, zero-width, tags), surrogates, line/paragraph separators."""


def _unsafe(ch: str, keep: str) -> bool:
    if ch in keep:
        return False
    if ch < "\x7f":
        return ch < " "
    return ch in _FILLERS or unicodedata.category(ch) in _UNSAFE_CATEGORIES


def _mark(ch: str) -> str:
    # Python escape notation: what `repr` shows, and what a reviewer can search for.
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"  # ESC -> \x1b, DEL -> \x7f, the one-byte CSI -> \x9b
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str, *, multiline: bool = False) -> str:
    """Return `text` with every control, bidi and invisible character made visible.

    C0 and C1 controls and DEL become `\\x1b`-style escapes; format
    characters (bidi controls, zero-width characters, BOM, tag characters),
    line/paragraph separators, lone surrogates and blank-drawing fillers
    become `\\u202e`-style escapes. Tab is kept; with `multiline`, newlines
    are kept too (a view that draws several lines), otherwise they show as
    `\\x0a`.
    """
    keep = "\t\n" if multiline else "\t"
    plain = text if text.isprintable() else text.replace("\t", "").replace("\n", "" if multiline else "\n")
    if plain.isprintable() and _FILLERS.isdisjoint(text):
        return text  # the common case, at C speed
    return "".join(_mark(c) if _unsafe(c, keep) else c for c in text)


def bidi_characters(text: str) -> list[str]:
    """Return the bidi-control and invisible characters in `text`, in order (repeats kept)."""
    if text.isascii():
        return []
    # Non-ASCII format characters and fillers; C1 controls are escaped by `visible` but are not "bidi".
    return [c for c in text if c > "\x9f" and (c in BIDI_CONTROLS or c in INVISIBLES or _unsafe(c, ""))]


MARKER = "\u2426"
"""What `picture` draws for a bidi, invisible or format character: ␦ (one cell)."""


@functools.lru_cache(maxsize=1)
def _picture_table() -> dict[int, int]:
    # Built once, on first use: one pass over the Basic Multilingual Plane (~20 ms).
    table = {c: 0x2400 + c for c in range(0x20) if c != 0x09}  # ␀ … ␟, as `cat -v` never could
    table[0x7F] = 0x2421  # ␡
    table.update(dict.fromkeys(range(128, 160), 65533))  # C1: no picture exists
    marker = ord(MARKER)
    for c in range(0xA0, 0x10000):
        ch = chr(c)
        if ch in _FILLERS or unicodedata.category(ch) in _UNSAFE_CATEGORIES:
            table[c] = marker
    table.update(dict.fromkeys(range(917504, 917632), marker))  # tag characters
    return table


def picture(text: str) -> str:
    """Return `text` with each unsafe character replaced by one visible character (same length).

    For views that align columns or highlight by character offset (the
    diff): C0 controls become control pictures (ESC is ␛), DEL ␡, C1 controls
    U+FFFD, and bidi, invisible and format characters ␦. Tabs are kept.
    """
    if text.isprintable() and _FILLERS.isdisjoint(text):
        return text
    return text.translate(_picture_table())


def json_visible(dumped: str) -> str:
    """Return JSON text (from `json.dumps`) with every unsafe character written as a `\\\\uXXXX` escape.

    The data is unchanged for any JSON reader; only a terminal showing the
    text sees escapes instead of C1 controls or bidi characters (`json.dumps`
    already escapes C0 controls, but not these).
    """
    if dumped.isascii():
        return dumped

    def esc(ch: str) -> str:
        code = ord(ch)
        if code < 0x10000:
            return f"\\u{code:04x}"
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"

    return "".join(esc(c) if c > "\x7e" and _unsafe(c, "") else c for c in dumped)
