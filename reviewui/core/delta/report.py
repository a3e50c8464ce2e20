"""`reviewui delta`'s two renderings: the contract JSON and the text for a terminal.

JSON: `{"since", "head", "hunks": [{"file", "header", "state", "evidence",
"verdict"}], "counts"}`. A hunk's `verdict` and `evidence` come from the
stored sweep of the head now (the bite verdict, and whether that grade was
`reused` from an earlier sweep or `fresh`), null when no sweep of this head
is stored; a gone hunk has neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reviewui.core.delta.model import Delta, HunkDelta
from reviewui.core.delta.since import Since
from reviewui.core.safe_text import visible

if TYPE_CHECKING:
    from reviewui.core.bite.report import BiteReport, HunkResult

INTERDIFF_MARK = "    | "
"""What starts every line of a changed hunk's interdiff in the text output."""


def _result(report: BiteReport | None, h: HunkDelta) -> HunkResult | None:
    if report is None or h.index is None:
        return None
    return next((r for r in report.results if r.file == h.file and r.index == h.index), None)


def to_json(delta: Delta, report: BiteReport | None = None) -> dict[str, Any]:
    """The contract document (see the module docstring); `report` is the stored sweep of the head now, if any."""
    hunks = []
    for h in delta.hunks:
        r = _result(report, h)
        hunks.append({"file": h.file, "header": h.header, "state": h.state,
                      "evidence": getattr(r, "evidence", None) if r is not None else None,
                      "verdict": r.verdict if r is not None else None})
    return {"since": delta.since, "head": delta.head, "hunks": hunks, "counts": delta.counts()}


def render_text(branch: str, since: Since, delta: Delta, report: BiteReport | None = None) -> str:
    """One line saying since when and how much changed, then one line per hunk (interdiffs under changed ones)."""
    lines = [f"{branch}: {since.words()} ({delta.since[:10]}..{delta.head[:10]}): {delta.words()}"]
    for h in delta.hunks:
        r = _result(report, h)
        grade = f"  {r.verdict} ({getattr(r, 'evidence', 'fresh')})" if r is not None else ""
        lines.append(f"{h.state.upper():<10} {h.file} {h.header}{grade}")
        if h.state == "changed" and h.interdiff:
            lines.extend(INTERDIFF_MARK + ln for ln in h.interdiff.splitlines())
    return "\n".join(visible(line) for line in lines) + "\n"
