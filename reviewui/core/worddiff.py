"""Word-level changes inside changed line pairs.

A run of removed lines followed by a run of added lines is paired line by
line; for each pair the changed character spans are found with difflib on
word tokens. Pairs too different to be "the same line edited" get no spans,
so a rewritten line is shown as a whole change rather than as confetti.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Sequence

Span = tuple[int, int]

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
MIN_SIMILARITY = 0.4
MAX_LINE = 2_000


def changed_spans(old: str, new: str) -> tuple[list[Span], list[Span]] | None:
    """Character spans that differ in `old` and in `new`, or None when unrelated."""
    if len(old) > MAX_LINE or len(new) > MAX_LINE:
        return None
    a = _TOKEN.findall(old)
    b = _TOKEN.findall(new)
    sm = SequenceMatcher(None, a, b, autojunk=False)
    if sm.ratio() < MIN_SIMILARITY:
        return None
    a_pos = _offsets(a)
    b_pos = _offsets(b)
    old_spans: list[Span] = []
    new_spans: list[Span] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            old_spans.append((a_pos[i1], a_pos[i2]))
        if j2 > j1:
            new_spans.append((b_pos[j1], b_pos[j2]))
    return old_spans, new_spans


def _offsets(tokens: Sequence[str]) -> list[int]:
    out = [0]
    for t in tokens:
        out.append(out[-1] + len(t))
    return out


def pair_changes(kinds: Sequence[str]) -> list[tuple[int, int]]:
    """Pair indexes of removed and added lines: each removed run with the added run after it."""
    pairs: list[tuple[int, int]] = []
    i = 0
    n = len(kinds)
    while i < n:
        if kinds[i] != "removed":
            i += 1
            continue
        r0 = i
        while i < n and kinds[i] == "removed":
            i += 1
        a0 = i
        while i < n and kinds[i] == "added":
            i += 1
        removed = range(r0, a0)
        added = range(a0, i)
        pairs.extend(zip(removed, added, strict=False))
    return pairs
