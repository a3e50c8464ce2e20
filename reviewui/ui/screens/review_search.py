"""The review screen's search part: `/` searches the diff of every file, `n`/`N` step through the matches.

While a search is active, `n` and `N` go to the next and previous match
(across files, in file-list order) and the footer says so; `escape` clears
the search and `n` is the next hunk again. Matches are highlighted in the
unified and the side-by-side view alike. The transcript keeps its own `/`.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.screen import Screen

from reviewui.core.safe_text import visible
from reviewui.ui.diff_rows import display_text
from reviewui.ui.evidence_view import plural
from reviewui.ui.screens.review_part import ReviewHost, ReviewPart
from reviewui.ui.diff_rows import find_all


@dataclass(frozen=True)
class Match:
    """One match of the search in the diff."""

    path: str
    hunk: int
    """Index of the hunk in its file."""
    line: int
    """Index of the line within the hunk."""
    start: int
    """Column of the match in the line as drawn."""


class SearchPart(ReviewPart):
    """Search in the diff and step through its matches."""

    BINDINGS = [
        Binding("slash", "search_diff", "Search", id="review.search", key_display="/",
                tooltip="Search the diff of every file (then n / N go to the next / previous match)"),
        Binding("n", "next_match", "Next match", id="review.next_match",
                tooltip="Next match of the search, across files (escape clears the search; n is next hunk again)"),
        Binding("N", "prev_match", "Prev match", id="review.prev_match",
                tooltip="Previous match of the search, across files"),
        Binding("escape", "clear_search", "Clear search", id="review.clear_search",
                tooltip="Clear the search: n and N go back to moving by hunk"),
    ]

    def __init__(self, screen: Screen[None], host: ReviewHost) -> None:
        super().__init__(screen, host)
        self.query = ""
        """The active search ("" when none)."""
        self.matches: list[Match] = []
        self.current = -1
        """Index in `matches` of the match last gone to (-1: none yet)."""

    @property
    def active(self) -> bool:
        """True while a search is active (n/N step through its matches)."""
        return bool(self.query)

    def check_action(self, action: str) -> bool | None:
        if action in ("next_match", "prev_match", "clear_search"):
            return self.active
        if action == "next_hunk":
            return not self.active  # `n` is the next match while a search is active
        return True

    def search(self) -> None:
        """Ask for the text to search (the last search offered again)."""
        from reviewui.ui.screens.text_prompt import TextPromptModal  # not at the top: not on the first screen

        def done(text: str | None) -> None:
            if text is None:
                return
            if not text:
                self.clear()
                return
            self.start(text)

        prompt = TextPromptModal("Search the diff (every file; case does not matter; empty clears)",
                                 "text to find", value=self.query, allow_empty=True)
        self.screen.app.push_screen(prompt, done)

    def start(self, query: str) -> None:
        """Search every file for `query`, highlight the matches and go to the first one after the cursor."""
        self.query = query
        self.matches = self.find(query)
        self.current = -1
        self.host.diff_view.set_search(query)
        self.screen.refresh_bindings()
        if not self.matches:
            self.host.set_status(f"search {visible(query)!r}: no match in the diff (escape clears)", "search")
            return
        self.step(1)

    def find(self, query: str) -> list[Match]:
        """Every match of `query` in the diff, in file-list order, then hunk, line and column."""
        out: list[Match] = []
        for path in self.host.file_list.paths:
            f = self.session.diff.file(path)
            if f is None:
                continue
            for h in f.hunks:
                for i, line in enumerate(h.lines):
                    out += [Match(path, h.index, i, start) for start, _ in find_all(display_text(line.text), query)]
        return out

    def _here(self) -> tuple[int, int, int, int]:
        """Where the cursor is, as a sort key comparable with a match's."""
        view = self.host.diff_view
        order = {p: n for n, p in enumerate(self.host.file_list.paths)}
        path = view.file.path if view.file is not None else ""
        if not view.rows:
            return (order.get(path, -1), -1, -1, -1)
        row = view.rows[min(view.cursor, len(view.rows) - 1)]
        line = row.line if row.line >= 0 else max((s.line for s in (row.left, row.right) if s is not None), default=-1)
        return (order.get(path, -1), row.hunk if row.hunk is not None else -1, line, 10**9)

    def _key(self, m: Match) -> tuple[int, int, int, int]:
        order = {p: n for n, p in enumerate(self.host.file_list.paths)}
        return (order.get(m.path, -1), m.hunk, m.line, m.start)

    def step(self, direction: int) -> None:
        """Go to the next (1) or previous (-1) match, wrapping around past the last (first) one."""
        if not self.matches:
            self.screen.notify(f"no match for {visible(self.query)!r}", timeout=2, markup=False)
            return
        if self.current < 0:
            here = self._here()
            after = [i for i, m in enumerate(self.matches) if self._key(m)[:3] >= here[:3]]
            self.current = after[0] if after and direction > 0 else (0 if direction > 0 else len(self.matches) - 1)
        else:
            self.current = (self.current + direction) % len(self.matches)
        m = self.matches[self.current]
        self.host.navigation.show(m.path, m.hunk)
        view = self.host.diff_view
        y = view.row_for_hunk_line(m.hunk, m.line)
        if y is not None:
            view.cursor = y
        self.host.set_status(f"search {visible(self.query)!r}: match {self.current + 1} of {len(self.matches)} "
                               f"in {plural(len({x.path for x in self.matches}), 'file')} — n / N next / previous, "
                               f"escape clears", "search")

    def clear(self) -> None:
        """Clear the search: no highlight, and n / N move by hunk again."""
        self.query = ""
        self.matches = []
        self.current = -1
        self.host.diff_view.set_search("")
        self.screen.refresh_bindings()
        self.host.set_status("", "search")
