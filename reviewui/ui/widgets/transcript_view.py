"""TranscriptView: the agent's turns, one line each, drawn only where visible.

A Line API widget, so a transcript of any length opens at once and the
last turn is one keypress away. `enter` expands a turn (its text, tool
calls and edits, each edit as a small diff; reasoning stays collapsed, with
its size, until `z` shows all of it). Long lines wrap; `w` turns wrapping
off for a horizontal scroll instead. Filters: flagged turns only (`!`), one
flag at a time (`l` cycles), and a search (`/`) through text, reasoning and
tool input. `g` asks the screen to show the hunks a turn wrote.

A turn that makes a claim about the tests carries a claim flag once the
claim is checked (`claim-contradicted`, `-without-run`, `-unverifiable`,
`-confirmed`, the findings of the same names): drawn, filtered and cycled
like the turn's own flags.

A subagent's turns (Claude Code's Task calls) are folded into one line under
the Task call that started them until `o` opens them: the main agent's story
stays readable, and the folded line names what is inside. A filter hit or a
jump (`g` from a hunk) that lands inside a folded group opens it. Which turns
pass the filter and the rows they make are transcript_rows.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from reviewui.ui.diff_rows import display_text
from reviewui.ui.transcript_detail import CLAIM_FLAGS, search_text, turn_detail, turn_header, wrap
from reviewui.ui.transcript_groups import fold_summary, folded_runs, started_groups
from reviewui.ui.transcript_rows import (FOLD, filter_words, header_width, next_flag, row_of, turn_passes,
                                         turn_rows)
from reviewui.ui.widgets.line_cursor import LineCursorView

if TYPE_CHECKING:  # the transcript modules load with the transcript, after the first paint
    from reviewui.core.transcript import Transcript, Turn

class TranscriptView(LineCursorView):
    """The turns of a transcript with flags, token bars and expandable details."""

    BINDINGS = [
        Binding("enter", "toggle_turn", "Expand", id="transcript.expand",
                tooltip="Expand or collapse the turn under the cursor"),
        Binding("z", "toggle_reasoning", "Reasoning", id="transcript.reasoning",
                tooltip="Show or hide the turn's reasoning"),
        Binding("exclamation_mark", "toggle_flagged", "Flagged only", id="transcript.flagged", key_display="!",
                tooltip="Show only the turns worth a look (any flag)"),
        Binding("l", "cycle_flag", "By flag", id="transcript.by_flag",
                tooltip="Show only turns with one flag; cycles through the flags"),
        Binding("slash", "search", "Search", id="transcript.search", key_display="/",
                tooltip="Show only turns whose text, reasoning or tool input contains a text"),
        Binding("w", "toggle_wrap", "Wrap", id="transcript.wrap",
                tooltip="Wrap long lines, or not (then scroll sideways with ← →)"),
        Binding("left", "scroll_left", "Scroll left", id="transcript.scroll_left", show=False),
        Binding("right", "scroll_right", "Scroll right", id="transcript.scroll_right", show=False),
        Binding("g", "goto_hunks", "Go to hunk", id="transcript.goto_hunks", tooltip="Show the hunks this turn wrote"),
        Binding("o", "toggle_subagents", "Subagents", id="transcript.subagents",
                tooltip="Fold or unfold the subagent turns under the Task call at the cursor"),
    ]

    COMPONENT_CLASSES = {
        "turn--header", "turn--detail", "turn--muted", "turn--cursor", "turn--bar",
        "turn--flag-bad", "turn--flag-warn", "turn--flag-info", "turn--flag-good", "turn--role", "turn--added",
        "turn--removed",
    }

    DEFAULT_CSS = """
    TranscriptView { background: $surface; }
    TranscriptView > .turn--header { color: $text; }
    TranscriptView > .turn--detail { color: $text; }
    TranscriptView > .turn--muted { color: $text-muted; }
    TranscriptView > .turn--cursor { background: $primary 35%; }
    TranscriptView > .turn--bar { color: $accent; }
    TranscriptView > .turn--role { color: $accent; text-style: bold; }
    TranscriptView > .turn--flag-bad { background: $error; color: $text; }
    TranscriptView > .turn--flag-warn { background: $warning; color: $background; }
    TranscriptView > .turn--flag-info { background: $boost; color: $text-muted; }
    TranscriptView > .turn--flag-good { background: $success; color: $background; }
    TranscriptView > .turn--added { color: $success; }
    TranscriptView > .turn--removed { color: $error; }
    """

    NARROW = 100
    """Below this width a turn's header drops its token bar, so its text has room."""

    class GotoHunks(Message):
        """The reviewer asked for the hunks that turn `index` wrote."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class SearchRequested(Message):
        """The reviewer pressed `/`: the screen asks for the text."""

    class FilterChanged(Message):
        """The filter changed; `label` says what is shown."""

        def __init__(self, label: str) -> None:
            super().__init__()
            self.label = label

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.transcript: Transcript | None = None
        self.shown: list[int] = []
        """Indexes (0-based) into transcript.turns of the turns that pass the filter."""
        self.rows: list[tuple[int, int]] = []
        """(turn position, detail line number; -1 for the turn's own line)."""
        self.expanded: set[int] = set()
        self.show_reasoning: set[int] = set()
        self.flag_filter: str | None = None
        self.open_groups: set[str] = set()
        """Subagent groups (Task call ids) shown turn by turn; the others are folded into one line."""
        self._groups: set[str] = set()
        self._folds: dict[int, int] = {}
        """Folded runs: {position in `shown` of the first turn: number of turns}."""
        self.flagged_only = False
        self.search: str = ""
        self._details: dict[int, list[tuple[str, str]]] = {}
        self._visual: dict[int, list[tuple[str, str]]] = {}
        """Detail lines of a turn as drawn: wrapped to the width when `wrap` is on."""
        self._haystacks: dict[int, str] = {}
        self.wrap = True
        """Wrap long lines (True) or scroll sideways (False)."""
        self.links: Any = None
        """HunkLinks (turn -> hunks it wrote), once the transcript is linked to the diff."""
        self.claim_flags: dict[int, tuple[str, ...]] = {}
        """Turn index (1-based) -> the claim flags of the claims it makes, worst first."""
        self._max_input = 1
        self._styles: dict[str, Style] = {}

    # --- data --------------------------------------------------------------

    def set_transcript(self, transcript: Transcript) -> None:
        """Show `transcript` (all turns, collapsed)."""
        self.transcript = transcript
        self._max_input = max((t.usage.input for t in transcript.turns), default=0) or 1
        self.expanded.clear()
        self._details.clear()
        self._visual.clear()
        self._haystacks.clear()
        self.open_groups.clear()
        self._groups = {t.group for t in transcript.turns if t.group is not None}
        self._refilter()
        self.refresh_bindings()  # `o` is offered only when there are subagent turns

    def set_links(self, links: Any) -> None:
        """Show, under each expanded turn, the hunks of the diff it wrote."""
        self.links = links
        self._details.clear()
        self._visual.clear()
        self._rebuild_rows()

    def set_claims(self, flags: dict[int, tuple[str, ...]]) -> None:
        """Flag the turns that make claims: {turn index: claim flags} (replaces the ones shown)."""
        self.claim_flags = dict(flags)
        if self.flag_filter in CLAIM_FLAGS and not any(self.flag_filter in f for f in flags.values()):
            self.flag_filter = None  # that flag is gone: the filter would show nothing
        self._refilter()

    def flags_of(self, t: Turn) -> tuple[str, ...]:
        """Every flag turn `t` shows: its own, then its claims'."""
        claims = self.claim_flags.get(t.index)
        return (*t.flags, *claims) if claims else t.flags

    def _passes(self, t: Turn) -> bool:
        return turn_passes(self.flags_of(t), self.flagged_only, self.flag_filter, self.search,
                           lambda: self._haystack(t))

    def _haystack(self, t: Turn) -> str:
        hay = self._haystacks.get(t.index)
        if hay is None:
            hay = self._haystacks[t.index] = search_text(t)
        return hay

    def _refilter(self) -> None:
        turns = self.transcript.turns if self.transcript else ()
        keep = self.current_turn
        plain = not (self.flagged_only or self.flag_filter or self.search)
        self.shown = list(range(len(turns))) if plain else [i for i, t in enumerate(turns) if self._passes(t)]
        if not plain:  # a hit inside a folded group is not hidden by the fold
            self.open_groups |= {g for g in (turns[i].group for i in self.shown) if g is not None}
        self._rebuild_rows()
        if keep is not None:
            self.goto_turn(keep.index, quiet=True, reveal=False)
        self.post_message(self.FilterChanged(self.filter_label()))

    def filter_label(self) -> str:
        """What the filter shows, in words."""
        total = len(self.transcript.turns) if self.transcript else 0
        return filter_words(len(self.shown), total, self.flagged_only, self.flag_filter, self.search)

    def _rebuild_rows(self) -> None:
        turns = self.transcript.turns if self.transcript else ()
        self._folds = folded_runs(turns, self.shown, self.open_groups) if self._groups else {}
        rows, widest = turn_rows(self.shown, self._folds, self.expanded, self._visual_detail, measure=not self.wrap)
        self.rows = rows
        if not self.wrap and self.transcript is not None:
            widest = max([widest, *(header_width(t, self.flags_of(t)) for t in (turns[ti] for ti in self.shown))])
        width = self.scrollable_content_region.width or self.size.width
        self.virtual_size = Size(max(width, widest), len(rows))
        self.cursor = min(self.cursor, max(0, len(rows) - 1))
        self.refresh()

    def _visual_detail(self, ti: int) -> list[tuple[str, str]]:
        """The detail lines of turn `ti` as drawn: wrapped to the width, or whole."""
        got = self._visual.get(ti)
        if got is None:
            # room for the vertical scrollbar, which appears once the rows outgrow the height
            width = (self.size.width or 80) - max(2, self.styles.scrollbar_size_vertical) - 1
            got = [(style, part) for style, text in self._detail(ti)
                   for part in (wrap(text, width) if self.wrap else [text])]
            self._visual[ti] = got
        return got

    def on_resize(self) -> None:
        self._visual.clear()  # wrapped to the old width
        self._rebuild_rows()

    def _detail(self, ti: int) -> list[tuple[str, str]]:
        """(style name, text) lines shown under an expanded turn."""
        if ti not in self._details:
            assert self.transcript is not None
            t = self.transcript.turns[ti]
            self._details[ti] = [(st, display_text(x)) for st, x in turn_detail(t, ti in self.show_reasoning, self.links)]
        return self._details[ti]

    # --- cursor ------------------------------------------------------------

    @property
    def current_turn(self) -> Turn | None:
        """The turn under the cursor, or None."""
        if not self.rows or self.transcript is None:
            return None
        pos, _ = self.rows[min(self.cursor, len(self.rows) - 1)]
        return self.transcript.turns[self.shown[pos]]

    def goto_turn(self, index: int, quiet: bool = False, reveal: bool = True) -> bool:
        """Put the cursor on turn `index` (1-based); False when it is filtered out.

        A turn inside a folded subagent group unfolds it (`reveal`), or else
        the cursor goes to the group's folded line.
        """
        y = self._row_of(index - 1, folded=not reveal)
        if y is None and reveal and self.transcript is not None and 0 < index <= len(self.transcript.turns):
            group = self.transcript.turns[index - 1].group
            if group is not None and group not in self.open_groups:
                self.open_groups.add(group)
                self._rebuild_rows()
                y = self._row_of(index - 1, folded=False)
        if y is not None:
            self.cursor = y
            self.scroll_to(y=max(0, y - 2), animate=False, immediate=True)
            return True
        if not quiet:
            self.notify(f"turn {index} is hidden by the filter", severity="warning")
        return False

    def _row_of(self, ti: int, folded: bool = True) -> int | None:
        """The row of turn `ti`'s own line, or (`folded`) of the folded line it is inside; None when not shown."""
        return row_of(self.rows, self.shown, self._folds, ti, folded)

    def _folded_here(self) -> tuple[int, str] | None:
        """(row, group) when the cursor is on a folded line."""
        if not self.rows or self.transcript is None:
            return None
        y = min(self.cursor, len(self.rows) - 1)
        pos, k = self.rows[y]
        group = self.transcript.turns[self.shown[pos]].group
        return (y, group) if k == FOLD and group is not None else None

    # --- actions -------------------------------------------------------------

    def action_toggle_turn(self) -> None:
        t = self.current_turn
        if t is None:
            return
        if self._folded_here() is not None:  # enter on a folded line unfolds it
            self.action_toggle_subagents()
            return
        self.expanded ^= {t.index - 1}
        self._rebuild_rows()
        self.goto_turn(t.index, quiet=True)

    def action_toggle_reasoning(self) -> None:
        t = self.current_turn
        if t is None or not t.reasoning_chars:
            if t is not None:
                self.notify(f"turn {t.index} has no reasoning", timeout=2)
            return
        self.show_reasoning ^= {t.index - 1}
        self.expanded.add(t.index - 1)
        self._details.pop(t.index - 1, None)
        self._visual.pop(t.index - 1, None)
        self._rebuild_rows()
        self.goto_turn(t.index, quiet=True)

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap
        self._visual.clear()
        self.scroll_to(x=0, animate=False, immediate=True)
        keep = self.current_turn
        self._rebuild_rows()
        if keep is not None:
            self.goto_turn(keep.index, quiet=True)
        self.notify("long lines wrap" if self.wrap else "long lines scroll sideways (← →)", timeout=2)

    def action_toggle_flagged(self) -> None:
        self.flagged_only = not self.flagged_only
        self._refilter()

    def action_cycle_flag(self) -> None:
        turns = self.transcript.turns if self.transcript else ()
        self.flag_filter = next_flag(turns, self.claim_flags, self.flag_filter)
        self._refilter()

    def action_search(self) -> None:
        self.post_message(self.SearchRequested())

    def set_search(self, text: str) -> None:
        """Show only turns containing `text` ("" shows all)."""
        self.search = text
        self._refilter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_subagents":
            return bool(self._groups)  # no subagent turns: the key is not offered
        return True

    def action_toggle_subagents(self) -> None:
        """Unfold the folded line under the cursor; fold the group of the subagent turn (or Task call) there."""
        t = self.current_turn
        if t is None or self.transcript is None:
            return
        here = self._folded_here()
        if here is not None:
            self.open_groups.add(here[1])
            self._rebuild_rows()
            self.goto_turn(t.index, quiet=True)
            return
        groups = [t.group] if t.group is not None else started_groups(t, self._groups)
        if not groups:
            self.notify(f"turn {t.index} is neither a subagent's nor a Task call that started one", timeout=2)
            return
        if t.group is None and any(g not in self.open_groups for g in groups):
            self.open_groups.update(groups)  # on the Task call: unfold what it started
        else:
            self.open_groups.difference_update(groups)
        self._rebuild_rows()
        self.goto_turn(t.index, quiet=True, reveal=False)

    def action_goto_hunks(self) -> None:
        t = self.current_turn
        if t is not None:
            self.post_message(self.GotoHunks(t.index))

    # --- drawing -------------------------------------------------------------

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(f"turn--{name}")
        return style

    def notify_style_update(self) -> None:
        self._styles.clear()
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = int(scroll_y) + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= len(self.rows) or self.transcript is None:
            return Strip.blank(width, base)
        pos, k = self.rows[index]
        ti = self.shown[pos]
        if k == FOLD:
            run = [self.transcript.turns[i] for i in self.shown[pos:pos + self._folds[pos]]]
            text = Text("      " + display_text(fold_summary(run, self._fold_key())), self._style("muted"))
        elif k == -1:
            text = self._header(self.transcript.turns[ti])
        else:
            style, line = self._visual_detail(ti)[k]
            text = Text(line, style=self._style(style))
        text.truncate(width + int(scroll_x))
        strip = Strip(text.render(self.app.console), text.cell_len).crop_extend(int(scroll_x), int(scroll_x) + width, base)
        if index == self.cursor:
            cursor = self._style("cursor")
            strip = Strip([Segment(s.text, (s.style or Style()) + cursor) for s in strip], strip.cell_length)
        return strip

    def _fold_key(self) -> str:
        """The key that unfolds a group, as the reviewer's keymap has it."""
        keys = getattr(self.app, "_keymap", {}).get("transcript.subagents", "o")
        return self.app.get_key_display(Binding(keys.split(",")[0], ""))

    def _header(self, t: Turn) -> Text:
        narrow = (self.scrollable_content_region.width or self.size.width) < self.NARROW
        return turn_header(t, self._style, self._max_input, narrow, self.claim_flags.get(t.index, ()))
