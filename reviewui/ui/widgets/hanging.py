"""HangingLines: lines of a list whose wrapped rest stays under its text, not under its bullet.

A Static wraps a long line back to the left edge, so in a list such as the
verdict dialog's (`  ✗ ` then the item) the second line of an item starts
where the bullets do and reads as an item of its own. Here each row is a
lead (the indent and bullet) and a body; the body is wrapped to the width
left after the lead and its further lines are indented by the lead's width.
A rule of the kind pytest draws across its 80 columns (`==== ERRORS ====`)
is shortened to the width instead of wrapping into two broken rules.
"""

from __future__ import annotations

import re
from typing import Sequence, Union

from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

Row = Union[Content, "tuple[Content, Content]"]
"""A line without a lead (a heading), or (lead, body)."""

_LEAD = re.compile(r" +(?:[^\w\s] )?")
"""An indented line's lead: its indent, and a mark after it (one character that is neither a word's nor
a space, then a space: a bullet, a guard's gutter mark, an output gutter)."""


_RULE = re.compile(r"([=_\-*#~])\1{2,}(?:( \S(?:.*\S)? )\1{2,})?")
"""A rule: one fill character repeated, with a title in the middle or none (pytest's separators)."""
_RULE_FILL = 3
"""The fill a shortened rule keeps on each side of its title, at least."""


def fitted(body: Content, width: int) -> Content:
    """`body` as it is, or, when it is a rule wider than `width`, the rule with less fill (still a
    rule, its title whole); a rule whose title does not fit either is left to wrap."""
    if body.cell_length <= width or body.spans:
        return body
    rule = _RULE.fullmatch(body.plain)
    if rule is None:
        return body
    fill, title = rule.group(1), rule.group(2)
    if title is None:
        return Content(fill * width)
    side = (width - len(title)) // 2
    if side < _RULE_FILL:
        return body
    return Content(fill * side + title + fill * (width - len(title) - side))


def by_indent(lines: Sequence[Content]) -> list[Row]:
    """`lines` as rows whose lead is each line's own indent (and bullet): an indented line wraps
    under its text."""
    rows: list[Row] = []
    for line in lines:
        lead = _LEAD.match(line.plain)
        rows.append((line[:lead.end()], line[lead.end():]) if lead else line)
    return rows


class HangingLines(Visual):
    """Rows drawn one under another, each body wrapped beside its lead (a hanging indent)."""

    def __init__(self, rows: Sequence[Row]) -> None:
        self.rows: list[tuple[Content, Content]] = [
            row if isinstance(row, tuple) else (Content(""), row) for row in rows]
        self._cache: tuple[int, Content] | None = None

    def __str__(self) -> str:
        """The rows' plain text, one per line, unwrapped."""
        return "\n".join(lead.plain + body.plain for lead, body in self.rows)

    def wrapped(self, width: int) -> Content:
        """The rows as lines no wider than `width` (where a lead leaves room for a body)."""
        if self._cache is not None and self._cache[0] == width:
            return self._cache[1]
        lines: list[Content] = []
        for lead, body in self.rows:
            indent = lead.cell_length
            if indent >= width:  # no room beside the lead: the row wraps as plain text does
                lines.extend((lead + body).wrap(max(1, width)))
                continue
            pieces = fitted(body, width - indent).wrap(width - indent) or [Content("")]
            lines.append(lead + pieces[0])
            lines.extend(Content(" " * indent) + piece for piece in pieces[1:])
        text = Content("\n").join(lines)
        self._cache = (width, text)
        return text

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        """The wrapped lines as strips (part of the Visual protocol)."""
        return self.wrapped(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        """The widest row, unwrapped."""
        return max((lead.cell_length + body.cell_length for lead, body in self.rows), default=0)

    def get_height(self, rules: RulesMap, width: int) -> int:
        """How many lines the rows take at `width`."""
        return len(self.wrapped(width).plain.split("\n")) if width else 0
