"""TranscriptView: the agent's turns, one line each, drawn only where visible.

A Line API widget, so a transcript of any length opens at once and the
last turn is one keypress away. `enter` expands a turn (its text, tool
calls and edits, each edit as a small diff; reasoning stays collapsed, with
its size, until `z` shows all of it). Long lines wrap; `w` turns wrapping
off for a horizontal scroll instead. Filters: flagged turns only (`!`), one
flag at a time (`l` cycles), and a search (`/`) through text, reasoning and
tool input. `g` asks the screen to show the hunks a turn wrote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from reviewui.ui.diff_rows import display_text
from reviewui.ui.transcript_detail import edit_lines, search_text, wrap
from reviewui.ui.widgets.line_cursor import LineCursorView
from reviewui.core.safe_text import visible

if TYPE_CHECKING:  # the transcript modules load with the transcript, after the first paint
    from reviewui.core.transcript import Transcript, Turn

BAR = 12
MAX_DETAIL_LINES = 400
FLAG_TONE = {
    "truncated": "bad", "reasoning-only": "bad", "reasoning-resent": "warn", "writes-tests": "warn",
    "edits-existing-test": "bad", "edits-test-after-failure": "bad", "claims-done": "warn",
    "cache-miss": "warn", "prompt-changed": "warn", "tool-error": "info", "compaction": "info",
    "touch-declared": "info",
}


class TranscriptView(LineCursorView):
    """The turns of a transcript with flags, token bars and expandable details."""

    BINDINGS = [
        Binding("enter", "toggle_turn", "Expand", tooltip="Expand or collapse the turn under the cursor"),
        Binding("z", "toggle_reasoning", "Reasoning", tooltip="Show or hide the turn's reasoning"),
        Binding("exclamation_mark", "toggle_flagged", "Flagged only", key_display="!",
                tooltip="Show only the turns worth a look (any flag)"),
        Binding("l", "cycle_flag", "By flag", tooltip="Show only turns with one flag; cycles through the flags"),
        Binding("slash", "search", "Search", key_display="/",
                tooltip="Show only turns whose text, reasoning or tool input contains a text"),
        Binding("w", "toggle_wrap", "Wrap", tooltip="Wrap long lines, or not (then scroll sideways with ← →)"),
        Binding("left", "scroll_left", "Scroll left", show=False),
        Binding("right", "scroll_right", "Scroll right", show=False),
        Binding("g", "goto_hunks", "Go to hunk", tooltip="Show the hunks this turn wrote"),
    ]

    COMPONENT_CLASSES = {
        "turn--header", "turn--detail", "turn--muted", "turn--cursor", "turn--bar",
        "turn--flag-bad", "turn--flag-warn", "turn--flag-info", "turn--role", "turn--added", "turn--removed",
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
        self._refilter()

    def set_links(self, links: Any) -> None:
        """Show, under each expanded turn, the hunks of the diff it wrote."""
        self.links = links
        self._details.clear()
        self._visual.clear()
        self._rebuild_rows()

    def _passes(self, t: Turn) -> bool:
        if self.flagged_only and not t.flags:
            return False
        if self.flag_filter and self.flag_filter not in t.flags:
            return False
        if self.search:
            hay = self._haystacks.get(t.index)
            if hay is None:
                hay = self._haystacks[t.index] = search_text(t)
            return self.search.lower() in hay
        return True

    def _refilter(self) -> None:
        turns = self.transcript.turns if self.transcript else ()
        keep = self.current_turn
        plain = not (self.flagged_only or self.flag_filter or self.search)
        self.shown = list(range(len(turns))) if plain else [i for i, t in enumerate(turns) if self._passes(t)]
        self._rebuild_rows()
        if keep is not None:
            self.goto_turn(keep.index, quiet=True)
        self.post_message(self.FilterChanged(self.filter_label()))

    def filter_label(self) -> str:
        """What the filter shows, in words."""
        total = len(self.transcript.turns) if self.transcript else 0
        parts = []
        if self.flagged_only:
            parts.append("flagged")
        if self.flag_filter:
            parts.append(self.flag_filter)
        if self.search:
            parts.append(f"containing {self.search!r}")
        shown = f"{len(self.shown)}/{total} turns"
        return f"{shown} ({', '.join(parts)})" if parts else shown

    def _rebuild_rows(self) -> None:
        rows: list[tuple[int, int]] = []
        widest = 0
        for pos, ti in enumerate(self.shown):
            rows.append((pos, -1))
            if ti in self.expanded:
                visual = self._visual_detail(ti)
                rows.extend((pos, k) for k in range(len(visual)))
                if not self.wrap:
                    widest = max([widest, *(len(text) for _, text in visual)])
        self.rows = rows
        if not self.wrap and self.transcript is not None:
            widest = max([widest, *(self._header_width(self.transcript.turns[ti]) for ti in self.shown)])
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

    def _header_width(self, t: Turn) -> int:
        # An estimate that is never short: the fixed columns, the flags, the first line.
        first = t.text.strip().split("\n", 1)[0][:300] if t.text.strip() else ""
        return 6 + 9 + BAR + 19 + sum(len(f) + 3 for f in t.flags) + 1 + len(first) + 40

    def on_resize(self) -> None:
        self._visual.clear()  # wrapped to the old width
        self._rebuild_rows()

    def _detail(self, ti: int) -> list[tuple[str, str]]:
        """(style name, text) lines shown under an expanded turn."""
        if ti in self._details:
            return self._details[ti]
        assert self.transcript is not None
        t = self.transcript.turns[ti]
        lines: list[tuple[str, str]] = []
        if t.reasoning_chars:
            if ti in self.show_reasoning:
                lines.append(("muted", f"reasoning ({t.reasoning_chars:,} chars; z hides it):"))
                # all of it: the reasoning is read nowhere else
                lines.extend(("muted", "  " + ln) for ln in t.reasoning.splitlines())
            else:
                lines.append(("muted", f"reasoning: {t.reasoning_chars:,} chars (z shows it)"))
        text_lines = t.text.splitlines()
        lines.extend(("detail", "  " + ln) for ln in text_lines[:MAX_DETAIL_LINES])
        if len(text_lines) > MAX_DETAIL_LINES:
            lines.append(("muted", f"  … {len(text_lines) - MAX_DETAIL_LINES:,} more lines"))
        for c in t.tool_calls:
            lines.append(("detail", f"  → {c.name} [{c.kind}] {' '.join(c.paths)}"))
            if c.kind == "shell" and isinstance(c.arguments, dict) and isinstance(c.arguments.get("command"), str):
                lines.extend(("muted", "    $ " + ln) for ln in c.arguments["command"].splitlines()[:20])
        for e in t.edits:
            lines.extend(edit_lines(e))
        if self.links is not None:
            produced = self.links.hunks_for(t.index)
            if produced:
                shown = ", ".join(f"{path} hunk {i + 1}" for path, i in produced[:8])
                more = f" (+{len(produced) - 8} more)" if len(produced) > 8 else ""
                lines.append(("muted", f"  wrote: {shown}{more}   (g shows the first)"))
        u = t.usage
        if u.input or u.output:
            lines.append(("muted", f"  usage: input {u.input:,} (cached {u.cached:,}) output {u.output:,}"
                                   f" reasoning {u.reasoning:,}  stop={t.stop}"))
        self._details[ti] = lines = [(s, display_text(x)) for s, x in lines]
        return lines

    # --- cursor ------------------------------------------------------------

    @property
    def current_turn(self) -> Turn | None:
        """The turn under the cursor, or None."""
        if not self.rows or self.transcript is None:
            return None
        pos, _ = self.rows[min(self.cursor, len(self.rows) - 1)]
        return self.transcript.turns[self.shown[pos]]

    def goto_turn(self, index: int, quiet: bool = False) -> bool:
        """Put the cursor on turn `index` (1-based); False when it is filtered out."""
        for y, (pos, k) in enumerate(self.rows):
            if k == -1 and self.shown[pos] == index - 1:
                self.cursor = y
                self.scroll_to(y=max(0, y - 2), animate=False, immediate=True)
                return True
        if not quiet:
            self.notify(f"turn {index} is hidden by the filter", severity="warning")
        return False


    # --- actions -------------------------------------------------------------

    def action_toggle_turn(self) -> None:
        t = self.current_turn
        if t is None:
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
        from reviewui.core.transcript import FLAGS

        present = [f for f in FLAGS if self.transcript and any(f in t.flags for t in self.transcript.turns)]
        order: Sequence[str | None] = [None, *present]
        i = order.index(self.flag_filter) if self.flag_filter in order else 0
        self.flag_filter = order[(i + 1) % len(order)]
        self._refilter()

    def action_search(self) -> None:
        self.post_message(self.SearchRequested())

    def set_search(self, text: str) -> None:
        """Show only turns containing `text` ("" shows all)."""
        self.search = text
        self._refilter()

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
        if k == -1:
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

    def _header(self, t: Turn) -> Text:
        text = Text()
        text.append(f"#{t.index:<5}", self._style("muted"))
        text.append(f"{visible(t.role):<9}", self._style("role"))
        narrow = (self.scrollable_content_region.width or self.size.width) < self.NARROW
        if narrow:
            pass  # no token bar: at 80 columns it would leave the text a few characters
        elif t.usage.input or t.usage.output:
            filled = round(BAR * t.usage.input / self._max_input)
            text.append("█" * filled + "·" * (BAR - filled), self._style("bar"))
            text.append(f" {_k(t.usage.input):>6} in {_k(t.usage.output):>5} out ", self._style("muted"))
        else:
            text.append(" " * (BAR + 19))
        for flag in t.flags:
            text.append(f" {flag} ", self._style(f"flag-{FLAG_TONE.get(flag, 'info')}"))
            text.append(" ")
        first = display_text(t.text.strip().split("\n", 1)[0][:300]) if t.text.strip() else ""
        if not first and t.tool_calls:
            first = "→ " + visible(", ".join(c.name for c in t.tool_calls))
        elif not first and t.reasoning_chars:
            first = f"(reasoning only: {t.reasoning_chars:,} chars)"
        if t.group is not None:
            text.append(" ↳ subagent", self._style("muted"))  # a turn of the subagent a Task call started
        text.append(" " + first, self._style("header"))
        return text


def _k(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)
