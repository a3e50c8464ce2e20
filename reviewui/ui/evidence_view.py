"""How evidence looks: the one owner of the bite-verdict colours and the hunk badges.

The core's EvidenceLedger says what is known; this module turns it into
badges on hunk headers, a line on the file list and the verdict modal's
draft. Colours go through theme variables only.
"""

from __future__ import annotations

from textual.content import Content

from typing import TYPE_CHECKING, Sequence

from reviewui.core.bite.verdict_words import hunk_words
from reviewui.core.safe_text import visible
# The colours live in ui/tones.py, below guard_marks too; named here as well, where they always were.
from reviewui.ui.tones import BITE_TONE as BITE_TONE, TONE_STYLE as TONE_STYLE, bite_style as bite_style
from reviewui.ui.widgets.diff_paint import Badge

if TYPE_CHECKING:
    from reviewui.core.bite.report import HunkResult
    from reviewui.core.hunks import Hunk
    from reviewui.core.evidence import EvidenceLedger, FileEvidence, HistoryRow, HunkEvidence
    from reviewui.ui.screens.verdict import VerdictDraft


def verdict_count(n: int, verdict: str) -> str:
    """`1 bite`, `2 bites`, `1 toothless`: a count of bite verdicts as a person would say it."""
    return f"{n} bite" if verdict == "bites" and n == 1 else f"{n} {verdict}"


def plural(n: int, word: str) -> str:
    """`1 finding`, `2 findings`: a count as a person would say it (for words plural with an s)."""
    return f"{n} {word}{'s' if n != 1 else ''}"


def hunk_badges(ev: HunkEvidence) -> list[Badge]:
    """The badges of one hunk: bite verdict, reviewed, findings, transcript turns, comments."""
    row: list[Badge] = []
    if ev.bite is not None:
        from reviewui.ui.widgets.guard_marks import hunk_badge  # not at the top: guard_marks loads with the bites

        row.append(hunk_badge(ev.bite) or Badge(ev.bite.verdict, BITE_TONE.get(ev.bite.verdict, "info")))
    if ev.reviewed:
        row.append(Badge("✓ reviewed", "good"))
    if ev.findings:
        row.append(Badge(plural(len(ev.findings), "finding"), "bad" if ev.worst_severity == "error" else "warn"))
    if ev.turns is not None:
        if not ev.turns:
            row.append(Badge("not in transcript", "warn"))
        else:
            shown = ",".join(str(n) for n in ev.turns[:3]) + ("…" if len(ev.turns) > 3 else "")
            row.append(Badge(f"turn {shown}", "info"))
    if ev.comments:
        # the comment itself, not a count: the reviewer reads it back where they wrote it
        first = " ".join(ev.comments[-1].text.split())
        first = first if len(first) <= 60 else first[:59] + "…"
        more = f" (+{len(ev.comments) - 1})" if len(ev.comments) > 1 else ""
        row.append(Badge(f"💬 {visible(first)}{more}", "info"))
    return row


def file_summary(ev: FileEvidence, name_only: Sequence[HunkResult] = ()) -> Content | None:
    """A short line of evidence for the file list, None when nothing is known yet.

    One styled piece per fact (`1 bite `, `⚑3 `, `✓1/2`), so a list too narrow
    for it drops whole pieces (see FileList.entry), never half of one.
    `name_only`: the file's hunks whose revert only removes a name (`broken`,
    with guards): counted by their guards (`1 toothless guard`), not as broken.
    """
    parts: list[str | tuple[str, str]] = []
    guards = [g for r in name_only for g in r.guards]
    for verdict, n in ev.bite_counts:
        if verdict == "broken":
            n -= len(name_only)
        if n > 0:
            parts.append((f"{verdict_count(n, verdict)} ", bite_style(verdict)))
    for verdict in ("toothless", "uncovered"):
        n = sum(1 for g in guards if g.verdict == verdict)
        if n:
            parts.append((f"{n} {verdict} guard{'s' if n != 1 else ''} ", bite_style(verdict)))
    if guards and not any(g.verdict in ("toothless", "uncovered") for g in guards):
        parts.append((f"{len(guards)} guards bite " if len(guards) != 1 else "1 guard bites ", bite_style("bites")))
    if ev.findings:
        tone = "$error" if any(f.severity == "error" for f in ev.findings) else "$warning"
        parts.append((f"⚑{len(ev.findings)} ", tone))
    if ev.reviewed:
        parts.append((f"✓{ev.reviewed}/{ev.hunks}", "$success"))
    return Content.assemble(*parts) if parts else None


def verdict_draft(verdict: str, ledger: EvidenceLedger, history: Sequence[HistoryRow] = (),
                  hunks: Sequence[Hunk] | None = None, reason: str = "", kept_because: str = "",
                  warnings: Sequence[str] = ()) -> VerdictDraft:
    """The evidence a verdict would record now, as the modal's lines, with what stands against it.

    `hunks` (every hunk of the branch) lets unreviewed hunks stand against an
    approve; `reason` and `kept_because` carry a draft the reviewer typed before;
    `warnings` (a verdict on one's own work) stand against it first.
    """
    from reviewui.core.probe.run import outcome_words
    from reviewui.ui.screens.verdict import VerdictDraft  # not at the top: not on the first screen

    bites = [f"{r.file} {r.header}: {hunk_words(r)}" for r in ledger.bite_results()]
    probes = [f"{p.name}: {outcome_words(p.outcomes)}" for p in ledger.probes()]
    findings = [f"{f.severity} {f.kind}: {f.message}" for f in ledger.findings]
    comments = [f"{c.file} {c.header}: {c.text}" for c in ledger.state.comments()]
    return VerdictDraft(verdict, bites, probes, findings, comments,
                        against=[*warnings, *against(verdict, ledger, history, hunks)],
                        reason=reason, kept_because=kept_because)


def against(verdict: str, ledger: EvidenceLedger, history: Sequence[HistoryRow] = (),
            hunks: Sequence[Hunk] | None = None) -> list[str]:
    """What stands against `verdict` now, in plain words (the ledger decides; empty: nothing does)."""
    return ledger.against(verdict, history, hunks)
