"""The findings list and the file list's finding badge: where a finding is, and how bad the worst one is."""

from __future__ import annotations

from pathlib import Path

from reviewui.core.evidence import FileEvidence
from reviewui.core.findings.model import Finding
from reviewui.ui.evidence_view import file_summary
from tests.ui.findings_list import drawn_findings, findings_open


async def test_a_finding_names_its_line_only_when_it_has_one(tmp_path: Path) -> None:
    # tests-not-additive at lines, undeclared-write on a whole file
    async with findings_open(tmp_path, "03-null-guard", "agent/null-guard", (160, 40)) as app:
        drawn = drawn_findings(app)
    whole = next(line for line in drawn if "undeclared-write" in line)
    assert "ledger/defaults.py  " in whole and "ledger/defaults.py:" not in whole  # no ":None", no ":0"
    assert any("tests-not-additive" in line and "tests/test_writer.py:15  " in line for line in drawn)


def _finding(severity: str) -> Finding:
    return Finding(kind="k", severity=severity, file="a.py", line=1, symbol=None, message="m")  # type: ignore[arg-type]


def test_the_file_badge_takes_the_tone_of_its_worst_finding() -> None:
    def badge_style(*severities: str) -> str:
        ev = FileEvidence("a.py", (), tuple(_finding(s) for s in severities), None, 0)
        summary = file_summary(ev)
        assert summary is not None
        (span,) = [s for s in summary.spans if summary.plain[s.start:s.end].startswith("⚑")]
        assert summary.plain[span.start:span.end] == f"⚑{len(severities)} "
        return str(span.style)

    assert badge_style("warning", "info") == "$warning"
    assert badge_style("warning", "error") == badge_style("error") == "$error"
