"""`test-reads-changed-source`: a test that reads a changed source file as data, from a bite sweep.

The baseline records which tests open a changed source file other than by importing it
(bite/source_readers.py): pinning its hash, comparing its text. Such a test fails whenever a byte
of the file changes, so its failures are no bites of that file's hunks (the sweep sets them
aside); the finding names each test and file, at the test's file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewui.core.findings.model import Finding, finding

if TYPE_CHECKING:
    from reviewui.core.bite.report import BiteReport


def source_read_as_data(bite: BiteReport | None) -> list[Finding]:
    """One finding per test and changed source file it reads as data (none without a sweep)."""
    if bite is None:
        return []
    out: list[Finding] = []
    for path, tests in bite.baseline.source_readers:
        for test in tests:
            out.append(finding(
                "test-reads-changed-source",
                f"{test} reads {path} as data, not by importing it: it fails whenever a byte of that file "
                "changes, so its failures are no bites of that file's hunks",
                file=test.split("::", 1)[0], symbol=test, evidence=path))
    return out
