"""`reviewui queue --format text|json`: the queue's rows in order (the JSON keys are a contract)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Sequence

from reviewui.core.queue.git_batch import MAX_BRANCHES
from reviewui.core.queue.order import TIER_NAMES, Row, delta_words
from reviewui.core.safe_text import visible


def row_json(row: Row) -> dict[str, Any]:
    """One row of `{"rows": [...]}`."""
    r, e = row.record, row.record.evidence
    return {
        "branch": r.branch, "head": r.head, "base": r.base, "tier": row.tier, "reason": row.reason,
        "verdict": r.verdict, "verdict_by": r.verdict_by, "currency": r.currency, "delta": r.delta,
        "verdict_provenance": r.verdict_provenance, "not_counted": r.not_counted,
        "bite": None if e.status != "ready" else {"bites": e.bites, "total": e.total, "toothless": e.toothless},
        "evidence": e.status,
        "findings": dict(e.findings), "claims": {"contradicted": e.contradicted},
        "transcript": r.transcript,
        "size": {"added": r.added, "removed": r.removed, "files": r.files},
        "agent": r.agent, "task": r.task,
        "waiting_since": r.changed_at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "hidden": row.hidden,
    }


def render_json(rows: Sequence[Row], omitted: int = 0) -> dict[str, Any]:
    """The headless contract: `{"rows": [...], "omitted": N}`, rows in queue order; `omitted` counts the
    branches past the branch cap that are not listed (the oldest)."""
    return {"rows": [row_json(r) for r in rows], "omitted": omitted}


def render_json_text(rows: Sequence[Row], omitted: int = 0) -> str:
    """`render_json` as text: one row per line (JSON, ASCII only), written by the C encoder row by row
    (`indent` would send 10 000 rows through the pure-Python one)."""
    import json

    body = ",\n".join("    " + json.dumps(row_json(r)) for r in rows)
    return '{\n  "rows": [\n' + body + ("\n" if body else "") + f'  ],\n  "omitted": {int(omitted)}\n}}'


def omitted_words(omitted: int) -> str:
    """The line that says the queue was cut ("" when it was not)."""
    if not omitted:
        return ""
    return f"{omitted} older branch{'es' * (omitted != 1)} not listed (the queue lists the newest {MAX_BRANCHES:,})"


def age_text(when: datetime, now: datetime) -> str:
    """How long ago `when` was, in the largest whole unit (`3d`, `5h`, `12m`, `40s`)."""
    s = max(0, int((now - when).total_seconds()))
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= n:
            return f"{s // n}{unit}"
    return f"{s}s"


def render_text(rows: Sequence[Row], now: datetime | None = None, show_hidden: bool = False,
                omitted: int = 0) -> str:
    """The queue as a plain table, tier headings first; every string from the repo drawn escaped; a last
    line says how many branches past the cap are not listed."""
    now = now or datetime.now(timezone.utc)
    lines: list[str] = []
    tier = 0
    shown = [r for r in rows if show_hidden or not r.hidden]
    for row in shown:
        if row.tier != tier:
            tier = row.tier
            lines.append(f"{tier} {TIER_NAMES[tier]}")
        r, e = row.record, row.record.evidence
        bite = f"{e.bites}/{e.total}" if e.status == "ready" else "…"
        verdict = f"{r.verdict} ({r.currency})" if r.verdict else "—"
        delta = f"; {delta_words(r)}" if r.delta is not None else ""
        lines.append(f"  {visible(r.branch)[:48]:<48} {bite:>7} {verdict:<20} +{r.added}/-{r.removed} "
                     f"{age_text(r.changed_at, now):>4}  {visible(row.reason)}{delta}")
    hidden = len(rows) - len(shown)
    if hidden:
        lines.append(f"({hidden} approved and merged, not shown)")
    if omitted:
        lines.append(f"({omitted_words(omitted)})")
    return "\n".join(lines) if lines else "no agent branches"
