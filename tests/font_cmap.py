"""The characters a TrueType font has glyphs for, read from its `cmap` table (formats 4 and 12).

For the browser tests: the served terminal draws in the font reviewui bundles
(`reviewui/ui/serve_page/fonts`), so what it can draw is that font's cmap.
"""

from __future__ import annotations

import struct
from pathlib import Path


def font_chars(path: Path) -> frozenset[str]:
    """Every character `path` (a .ttf) maps to a glyph."""
    data = path.read_bytes()
    tables = {}
    for i in range(struct.unpack(">H", data[4:6])[0]):
        tag, _, offset, _ = struct.unpack(">4sIII", data[12 + 16 * i:28 + 16 * i])
        tables[tag] = offset
    cmap = tables[b"cmap"]
    subtables = {}
    for i in range(struct.unpack(">H", data[cmap + 2:cmap + 4])[0]):
        _, _, offset = struct.unpack(">HHI", data[cmap + 4 + 8 * i:cmap + 12 + 8 * i])
        subtables[struct.unpack(">H", data[cmap + offset:cmap + offset + 2])[0]] = cmap + offset
    if 12 in subtables:
        return frozenset(_format12(data, subtables[12]))
    return frozenset(_format4(data, subtables[4]))


def _format12(data: bytes, at: int) -> set[str]:
    chars: set[str] = set()
    for k in range(struct.unpack(">I", data[at + 12:at + 16])[0]):
        start, end, _ = struct.unpack(">III", data[at + 16 + 12 * k:at + 28 + 12 * k])
        chars.update(chr(c) for c in range(start, end + 1))
    return chars


def _format4(data: bytes, at: int) -> set[str]:
    n = struct.unpack(">H", data[at + 6:at + 8])[0] // 2
    ends = struct.unpack(f">{n}H", data[at + 14:at + 14 + 2 * n])
    starts = struct.unpack(f">{n}H", data[at + 16 + 2 * n:at + 16 + 4 * n])
    deltas = struct.unpack(f">{n}h", data[at + 16 + 4 * n:at + 16 + 6 * n])
    ranges_at = at + 16 + 6 * n
    range_offsets = struct.unpack(f">{n}H", data[ranges_at:ranges_at + 2 * n])
    chars: set[str] = set()
    for k in range(n):
        for c in range(starts[k], ends[k] + 1):
            if c == 0xFFFF:
                continue
            if range_offsets[k] == 0:
                glyph = (c + deltas[k]) & 0xFFFF
            else:
                p = ranges_at + 2 * k + range_offsets[k] + 2 * (c - starts[k])
                glyph = struct.unpack(">H", data[p:p + 2])[0]
                glyph = (glyph + deltas[k]) & 0xFFFF if glyph else 0
            if glyph:
                chars.add(chr(c))
    return chars
