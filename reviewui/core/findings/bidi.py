"""`bidi-control`: a code hunk adds bidirectional-text or invisible characters.

Trojan Source (CVE-2021-42574): bidi overrides and isolates reorder what the
reviewer sees without changing what the compiler reads, so a comment can
appear to close before code that actually sits inside it; zero-width
characters make two identifiers that look alike differ. A green suite never
notices either. One finding per hunk, at its first such line; bidi controls
are errors, invisible characters alone a warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewui.core.findings.model import Finding, finding
from reviewui.core.safe_text import BIDI_CONTROLS, bidi_characters, visible

if TYPE_CHECKING:
    from reviewui.core.diff import Diff


CODE_ROLES = ("source", "test")


def bidi_control(diff: "Diff") -> list[Finding]:
    """Return a `bidi-control` finding for each code hunk whose added lines hold such characters."""
    out: list[Finding] = []
    for f in diff.files:
        if f.binary or f.role not in CODE_ROLES or f.status == "deleted":
            continue
        for hunk in f.hunks:
            hits = []
            for ln in hunk.lines:
                if ln.kind != "added":
                    continue
                text = ln.text[1:] if ln.new_no == 1 and ln.text.startswith("\ufeff") else ln.text  # a BOM
                chars = bidi_characters(text)
                if chars:
                    hits.append((ln.new_no, chars, ln.text))
            if not hits:
                continue
            chars = [c for _, cs, _ in hits for c in cs]
            bidi = any(c in BIDI_CONTROLS for c in chars)
            names = ", ".join(dict.fromkeys(f"U+{ord(c):04X}" for c in chars))
            what = "bidirectional-text controls" if bidi else "invisible characters"
            out.append(
                finding(
                    "bidi-control",
                    f"hunk {hunk.index} adds {what} ({names}): the code may read differently from how it runs",
                    file=f.path,
                    line=hits[0][0],
                    evidence="\n".join(f"+{no}: {visible(text)}" for no, _, text in hits[:12]),
                    severity=None if bidi else "warning",
                )
            )
    return out
