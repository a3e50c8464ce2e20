"""`test-reads-changed-source`: a test that reads a changed source file as data, from a bite sweep.

The baseline, and each graded run for itself, records which tests open a changed source file other
than by importing it, or reach its functions' code objects (bite/source_readers.py): pinning its hash, comparing its
text or its bytecode. Such a test fails whenever the file's code changes, so its failures are no bites of that file's hunks (the sweep sets them
aside); the finding names each test and file, at the test's file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewui.core.findings.model import Finding, finding

if TYPE_CHECKING:
    from reviewui.core.bite.report import BiteReport


def source_read_as_data(bite: BiteReport | None) -> list[Finding]:
    """One finding per test and changed source file it reads as data, in the baseline or only in a
    graded run (none without a sweep)."""
    if bite is None:
        return []
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for path, tests in bite.baseline.source_readers:
        for test in tests:
            seen.add((path, test))
            out.append(finding(
                "test-reads-changed-source",
                f"{test} reads {path} as data (its bytes, its text or its code objects), not by importing it: "
                "it fails whenever that file's code changes, so its failures are no bites of that file's hunks",
                file=test.split("::", 1)[0], symbol=test, evidence=path))
    for r in bite.results:
        for x in (r, *r.guards):
            for test in x.run_readers:
                if (r.file, test) in seen:
                    continue
                seen.add((r.file, test))
                out.append(finding(
                    "test-reads-changed-source",
                    f"{test} reads {r.file} as data in a graded run, not in the baseline: a test that reads "
                    "only where it runs beside fewer tests behaves differently when graded; its failures there "
                    "are no bites of that file's hunks",
                    file=test.split("::", 1)[0], symbol=test, evidence=r.file))
    return out
