"""Who wrote each line, from git-ai authorship notes: the diff gutter's letters and the hunk header's authors.

Each agent session the notes name gets a capital letter (`A`, `B`, … in the
order the branch's files first show it; `*` past `Z`), a human `h`. The diff
view draws a line's letter in its gutter and the hunk header lists the
authors of the hunk's added lines with their letters and counts. Every field
comes from the branch's notes: already made visible and bounded by the core,
and drawn here only as literal `rich.text.Text`, cut to a few authors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from string import ascii_uppercase
from typing import TYPE_CHECKING, Any, Mapping

from rich.style import Style
from rich.text import Text

from reviewui.core.safe_text import visible

if TYPE_CHECKING:  # the diff view draws these from the first paint; the notes' reader (json) loads later
    from reviewui.core.notes.authorship import Author, Authorship

HEADER_AUTHORS = 3
"""Authors named on a hunk header at most (the rest counted)."""
_LABEL = 40


@dataclass(frozen=True)
class AuthorMarks:
    """The authorship of the branch's head lines and the letter each author is drawn with."""

    lines: Mapping[str, Mapping[int, Author]] = field(default_factory=dict)
    """Head file → head line → its author."""
    letters: Mapping[Author, str] = field(default_factory=dict)
    """Author → the gutter letter (`A`… for agent sessions, `h` for humans)."""

    @classmethod
    def of(cls, authorship: Authorship, files: list[str] | None = None) -> AuthorMarks:
        """The marks of `authorship`, letters given in the order `files` (default: sorted) first show each author."""
        letters: dict[Author, str] = {}
        agents = 0
        for path in files if files is not None else sorted(authorship.lines):
            per = authorship.lines.get(path, {})
            for n in sorted(per):
                who = per[n]
                if who in letters:
                    continue
                if not who.is_agent:
                    letters[who] = "h"
                else:
                    letters[who] = ascii_uppercase[agents] if agents < len(ascii_uppercase) else "*"
                    agents += 1
        return cls(authorship.lines, letters)

    def letter(self, path: str, line: int | None) -> str | None:
        """The letter of whoever wrote head line `line` of `path`, or None when no note says."""
        if line is None:
            return None
        who = self.lines.get(path, {}).get(line)
        return self.letters.get(who) if who is not None else None

    def hunk_authors(self, hunk: Any) -> list[tuple[Author, int]]:
        """The authors of a hunk's added lines with how many each wrote, most first."""
        per = self.lines.get(hunk.file, {})
        counts: dict[Author, int] = {}
        for ln in hunk.lines:
            who = per.get(ln.new_no) if ln.kind == "added" and ln.new_no else None
            if who is not None:
                counts[who] = counts.get(who, 0) + 1
        return sorted(counts.items(), key=lambda kv: -kv[1])

    def header(self, hunk: Any, letter_style: Style, text_style: Style) -> Text:
        """` ✎ A claude · 5c7d5c23 ×12  h Alice ×1`: the hunk's authors for its header ("" when none)."""
        who = self.hunk_authors(hunk)
        out = Text()
        if not who:
            return out
        out.append("  ✎", text_style)
        for author, n in who[:HEADER_AUTHORS]:
            out.append(" ")
            out.append(f" {self.letters.get(author, '?')} ", letter_style)
            out.append(" " + visible(author.label())[:_LABEL] + f" ×{n}", text_style)
        if len(who) > HEADER_AUTHORS:
            out.append(f"  +{len(who) - HEADER_AUTHORS} more", text_style)
        return out
