"""`reviewui check` output: the JSON document (a contract), plain text, and the exit code.

Exit 0 when no finding is an `error`, 1 when any is; 2 (usage or input
errors) is the CLI's business. Text output is for a terminal or a CI log,
so control characters from the reviewed code are shown escaped, never
sent to the terminal.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from reviewui.core.findings.model import SEVERITIES, Finding
from reviewui.core.findings.sarif import to_sarif
from reviewui.core.safe_text import visible

if TYPE_CHECKING:
    from reviewui.core.diff import Diff
    from reviewui.core.target import Target

FORMATS = ("text", "json", "sarif")


def exit_code(findings: list[Finding]) -> int:
    """Return 1 when any finding is an `error`, else 0."""
    return 1 if any(f.severity == "error" for f in findings) else 0


def summary(findings: list[Finding]) -> dict[str, int]:
    """Return the count of findings per severity (every severity present)."""
    counts: dict[str, int] = dict.fromkeys(SEVERITIES, 0)
    for f in findings:
        counts[f.severity] = counts.get(f.severity, 0) + 1
    return counts


def check_json(target: "Target", diff: "Diff", findings: list[Finding],
               authors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Return the `reviewui check --format json` document as a dict.

    `authors` are the hunk records of the branch's git-ai authorship notes (`Authorship.hunk_records`).
    """
    return {
        "repo": str(target.repo_dir),
        "branch": target.branch,
        "base": target.base,
        "head": target.head,
        "files": [
            {
                "path": f.path,
                "old_path": f.old_path,
                "status": f.status,
                "role": f.role,
                "binary": bool(f.binary),
                "added": int(f.added),
                "removed": int(f.removed),
            }
            for f in diff.files
        ],
        "findings": [f.to_json() for f in findings],
        "summary": summary(findings),
        "authors": list(authors or []),
    }


def safe(text: str) -> str:
    """Return `text` with control, bidi and invisible characters (ANSI escapes included) made visible."""
    return visible(text)


def render_text(findings: list[Finding]) -> str:
    """Return findings as plain text: one line each, evidence indented, then a summary line."""
    lines: list[str] = []
    for f in findings:
        where = f"{f.location}: " if f.location else ""
        sym = f" [{f.symbol}]" if f.symbol else ""
        lines.append(safe(f"{f.severity}: {where}{f.kind}{sym}: {f.message}"))
        for ev in f.evidence.splitlines()[:12]:
            lines.append("    " + safe(ev)[:300])
    counts = summary(findings)
    if findings:
        lines.append("")
    lines.append(
        f"{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info"
        + (" — no findings" if not findings else "")
    )
    return "\n".join(lines) + "\n"


def render(fmt: str, target: "Target", diff: "Diff", findings: list[Finding], tool_version: str,
           authors: list[dict[str, Any]] | None = None) -> str:
    """Return the check output in `fmt` (`text`, `json` or `sarif`). Raises ValueError for another format.

    `authors` (the authorship notes' hunk records) go into the JSON.
    """
    if fmt == "text":
        return render_text(findings)
    if fmt == "json":
        return json.dumps(check_json(target, diff, findings, authors), indent=2, ensure_ascii=False) + "\n"
    if fmt == "sarif":
        changed = [f.path for f in diff.files] if diff is not None else []
        return json.dumps(to_sarif(target, findings, tool_version, changed_files=changed), indent=2,
                          ensure_ascii=False) + "\n"
    raise ValueError(f"unknown format: {fmt} (choose text, json or sarif)")
