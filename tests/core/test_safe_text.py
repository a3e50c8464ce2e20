"""`visible`: no byte from content can drive the terminal; bidi and invisible characters show."""

from __future__ import annotations

import pytest

from reviewui.core.safe_text import bidi_characters, picture, visible

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
TITLE = "\x1b]0;owned\x1b\\"


@pytest.mark.parametrize(
    "raw, shown",
    [
        (OSC52, "\\x1b]52;c;ZWNobyBwd25lZA==\\x07"),
        (TITLE, "\\x1b]0;owned\\x1b\\"),
        ("a\x9b31mb", "a\\x9b31mb"),  # one-byte CSI (C1)
        ("del\x7f", "del\\x7f"),
        ("cr\roverwrite", "cr\\x0doverwrite"),
        ("x\u202ey\u2066z\u2069", "x\\u202ey\\u2066z\\u2069"),
        ("zw\u200bsp\ufeff\u2028\u00ad", "zw\\u200bsp\\ufeff\\u2028\\xad"),
        ("tag\U000e0041", "tag\\U000e0041"),
        ("blank\u3164name", "blank\\u3164name"),
        ("line1\nline2", "line1\\x0aline2"),
        ("tab\tok", "tab\tok"),
        ("héllo 日本 🎉 שלום", "héllo 日本 🎉 שלום"),
        ("", ""),
        ("bad\udcffbyte", "bad\\udcffbyte"),
    ],
)
def test_visible(raw: str, shown: str) -> None:
    assert visible(raw) == shown


def test_multiline_keeps_newlines_only() -> None:
    assert visible("a\nb\x1b[2J\r\n", multiline=True) == "a\nb\\x1b[2J\\x0d\n"


def test_nothing_unsafe_survives_any_code_point() -> None:
    # Every code point below U+3000 and the specials: nothing a terminal acts on gets through.
    text = "".join(chr(c) for c in range(0x3000) if not 0xD800 <= c <= 0xDFFF) + "\ufeff\ufff9"
    out = visible(text)
    assert not any((ord(c) < 0x20 and c != "\t") or 0x7F <= ord(c) <= 0x9F for c in out)
    assert not set(out) & set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200e\u200f\ufeff\u2028\u2029")


def test_bidi_characters() -> None:
    assert bidi_characters("a\u202eb\x1b\u200bc") == ["\u202e", "\u200b"]
    assert bidi_characters("plain ascii\x1b") == [] and bidi_characters("日本 שלום") == []


def test_picture_keeps_one_character_per_character() -> None:
    raw = "a\x1b]52;c;x\x07\u202eb\x9b\u200b\U000e0041\x7f\tc"
    out = picture(raw)
    assert out == "a\u241b]52;c;x\u2407\u2426b\ufffd\u2426\u2426\u2421\tc"
    assert len(out) == len(raw)
    assert picture("日本 🎉 héllo") == "日本 🎉 héllo"
