"""One file's hunks: the `Hunk` and `DiffLine` records and their parsing from patch text.

The rest of reviewui names a hunk by `Hunk.key` (file, index) and asks "is this
branch-side line inside it" through `Hunk.contains`: the one owner of both.
unidiff does the parsing; a patch it cannot read has no hunks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

LineKind = Literal["context", "added", "removed"]


@dataclass(frozen=True)
class DiffLine:
    """One line of a hunk."""

    kind: LineKind
    """`context`, `added` or `removed`."""
    text: str
    """The line's content without its end-of-line characters."""
    old_no: int | None
    """Line number on the base side (None for added lines)."""
    new_no: int | None
    """Line number on the branch side (None for removed lines)."""
    no_newline: bool = False
    """The file ends on this line without a newline."""


@dataclass(frozen=True)
class Hunk:
    """One hunk of one file's change."""

    file: str
    """Path of the file (branch side; base side for deletions)."""
    index: int
    """0-based position of the hunk within its file."""
    header: str
    """The range header, e.g. `@@ -4,6 +4,8 @@`."""
    section: str
    """The function/section context git prints after the header, if any."""
    old_start: int
    """First base-side line."""
    old_len: int
    """Number of base-side lines."""
    new_start: int
    """First branch-side line."""
    new_len: int
    """Number of branch-side lines."""
    lines: tuple[DiffLine, ...]
    """The hunk's lines in order."""
    text: str
    """The hunk as it appears in the diff, header line included."""

    @property
    def added(self) -> int:
        """Number of added lines."""
        return sum(1 for ln in self.lines if ln.kind == "added")

    @property
    def removed(self) -> int:
        """Number of removed lines."""
        return sum(1 for ln in self.lines if ln.kind == "removed")

    @property
    def key(self) -> tuple[str, int]:
        """(file, index): how the rest of reviewui names a hunk."""
        return (self.file, self.index)

    @property
    def new_lines(self) -> range:
        """The branch-side line numbers the hunk spans (a pure deletion spans the line at new_start)."""
        return range(self.new_start, self.new_start + max(self.new_len, 1))

    def contains(self, line: int | None) -> bool:
        """True when branch-side `line` (1-based; None or 0 is no line) falls inside the hunk."""
        return line is not None and line >= 1 and line in self.new_lines


def parse_hunks(path: str, patch_text: str) -> tuple[Hunk, ...]:
    """Parse one file's patch text into Hunks (unidiff does the parsing)."""
    try:
        patch = PatchSet(patch_text)
    except UnidiffParseError:
        return ()
    hunks: list[Hunk] = []
    for pf in patch:
        for i, h in enumerate(pf):
            lines: list[DiffLine] = []
            for ln in h:
                if ln.line_type == "\\":
                    if lines:
                        lines[-1] = DiffLine(lines[-1].kind, lines[-1].text, lines[-1].old_no, lines[-1].new_no, True)
                    continue
                kind: LineKind = (
                    "added" if ln.is_added else "removed" if ln.is_removed else "context"
                )
                lines.append(DiffLine(kind, ln.value.rstrip("\r\n"), ln.source_line_no, ln.target_line_no))
            header = f"@@ -{h.source_start},{h.source_length} +{h.target_start},{h.target_length} @@"
            hunks.append(
                Hunk(
                    file=path,
                    index=i,
                    header=header,
                    section=(h.section_header or "").strip(),
                    old_start=h.source_start,
                    old_len=h.source_length,
                    new_start=h.target_start,
                    new_len=h.target_length,
                    lines=tuple(lines),
                    text=str(h),
                )
            )
    return tuple(hunks)
