"""How the review queue looks: its columns, a row's cells, the title and the focus line, and the sort.

Pure functions of the core's rows (`core/queue/order.Row`); the queue screen
calls them when it draws. Every string from a branch, a note or a transcript
goes through `visible` and into `Text`/`Content`, never markup.
"""

from __future__ import annotations

import time
from datetime import datetime

from rich.text import Text

from reviewui.core.findings.model import SEVERITY_RANK
from reviewui.core.queue.order import Row, delta_words
from reviewui.core.queue.report import age_text, omitted_words
from reviewui.core.safe_text import visible

SORTS = ("tier", "waiting", "size", "name")
"""The orders `s` cycles through (the first is the queue's own)."""
COLUMNS = (("tier", 4), ("reason", 44), ("branch", 32), ("agent", 22), ("bite", 18), ("findings", 9),
           ("claims", 6), ("transcript", 10), ("verdict", 30), ("currency", 9), ("delta", 30), ("size", 14),
           ("waiting", 7))
"""The queue's columns and their fixed widths (nothing is measured: a long value ends in an ellipsis)."""


def sorted_rows(rows: list[Row], how: str) -> list[Row]:
    """`rows` in the order the reviewer picked: the queue's own (tier), waiting, size or name."""
    if how == "waiting":
        return sorted(rows, key=lambda r: r.record.changed_at)
    if how == "size":
        return sorted(rows, key=lambda r: -(r.record.added + r.record.removed))
    if how == "name":
        return sorted(rows, key=lambda r: r.record.branch)
    return list(rows)


def row_cells(row: Row, now: datetime) -> tuple[Text, ...]:
    """A row's cells, each `Text` built from escaped strings (never markup)."""
    r, e = row.record, row.record.evidence
    bite = f"{e.bites}/{e.total}" + (f" ({e.toothless} toothless)" if e.toothless else "") \
        if e.status == "ready" else "…"
    by_rank = sorted(e.findings.items(), key=lambda kn: (SEVERITY_RANK.get(kn[0], len(SEVERITY_RANK)), kn[0]))
    found = " ".join(f"{n}{visible(k[:1])}" for k, n in by_rank if n) or "—"  # errors first, as the findings list
    who = visible(r.verdict_by or "")[:24] + (" (pulled)" if r.verdict_provenance.startswith("pulled") else "")
    verdict = f"{r.verdict} · {who}" if r.verdict else "—"
    agent = " ".join(visible(x) for x in (r.agent, r.task) if x) or "—"
    cells = (str(row.tier), visible(row.reason), visible(r.branch), agent, bite, found,
             str(e.contradicted) if e.contradicted else "—", r.transcript, verdict, r.currency,
             delta_words(r) or "—", f"+{r.added}/-{r.removed} {r.files}f", age_text(r.changed_at, now))
    return tuple(Text(c, no_wrap=True, end="") for c in cells)


def title_words(count: int, sort: str, kept_at: float | None, filter_text: str, hidden: int, omitted: int) -> str:
    """The queue's title line: how many branches, the sort, and what is not shown (or not read yet)."""
    title = f"review queue: {count} branch{'es' * (count != 1)} · sort: {sort}"
    if kept_at is not None:  # before the longer words: a narrow screen cuts the title's end
        title += f" · as of {time.strftime('%H:%M', time.localtime(kept_at))}, reading…"
    title += f" · filter: {visible(filter_text)}" if filter_text else ""
    title += f" · {hidden} approved and merged not shown" if hidden else ""
    title += f" · {omitted_words(omitted)}" if omitted else ""
    return title


def focus_words(row: Row | None, filter_text: str) -> str:
    """The line under the table: the cursor's branch, why it is where it is, its delta and agent."""
    who = " ".join(visible(x) for x in (row.record.agent, row.record.task) if x) if row else ""
    delta = delta_words(row.record) if row else ""  # its column is past the screen's right edge at 200
    none = f"no branch matches {visible(filter_text)!r} (escape: every branch)" if filter_text \
        else "no agent branches"
    return f"{visible(row.record.branch)} — {visible(row.reason)}" + (f" · {delta}" if delta else "") + (
        f" · {who}" if who else "") if row else none
