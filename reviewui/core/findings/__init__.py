"""Static findings and the core of the `reviewui check` gate.

The checks a green suite cannot make: the test tree must only grow, a
branch must change something (and not only its tests), a task's named
identifiers must appear, added functions must be called and must not copy
existing ones, writes must have been declared, and (with `--bite`) every
source hunk must be caught by some test. `compute_findings` runs them all;
`check_json`, `render_text`, `to_sarif` and `exit_code` make the gate's output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewui.core.lazy import lazy_attributes

if TYPE_CHECKING:
    from reviewui.core.findings.model import KINDS, SEVERITIES, Finding, KindInfo, Severity
    from reviewui.core.findings.report import FORMATS, check_json, exit_code, render, render_text, summary
    from reviewui.core.findings.run import compute_findings
    from reviewui.core.findings.sarif import to_sarif
    from reviewui.core.findings.task_ids import load_task_text

# Loaded on first use: `findings.model` (a Finding, its kinds) is imported by the evidence
# ledger before the first screen paints, and must not pull every rule in with it.
_HOME = {
    "KINDS": "model", "SEVERITIES": "model", "Finding": "model", "KindInfo": "model", "Severity": "model",
    "FORMATS": "report", "check_json": "report", "exit_code": "report", "render": "report",
    "render_text": "report", "summary": "report", "compute_findings": "run", "to_sarif": "sarif",
    "load_task_text": "task_ids",
}


__getattr__ = lazy_attributes(__name__, _HOME)

__all__ = [
    "FORMATS",
    "KINDS",
    "SEVERITIES",
    "Finding",
    "KindInfo",
    "Severity",
    "check_json",
    "compute_findings",
    "exit_code",
    "load_task_text",
    "render",
    "render_text",
    "summary",
    "to_sarif",
]
