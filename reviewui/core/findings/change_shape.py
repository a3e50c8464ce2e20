"""The shape of the whole change: nothing changed, or only tests changed.

Both are invisible to a green suite: a branch that changes nothing passes
every test it passed before, and a branch that only edits tests can make a
red suite green without touching the code under test.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from reviewui.core.findings.model import Finding, finding
from reviewui.core.roles import SOURCE_SUFFIXES

if TYPE_CHECKING:
    from reviewui.core.diff import Diff
    from reviewui.core.target import Target

SNAPSHOT_DIRS = frozenset({"__snapshots__", "snapshots", "golden", "goldens", "testdata"})
SNAPSHOT_SUFFIXES = frozenset({".snap", ".ambr", ".golden", ".approved", ".received"})


def is_snapshot_path(path: str) -> bool:
    """True for snapshot and golden files (syrupy, jest, approval tests, testdata/golden).

    Only data files count: a `.py` under `snapshots/` is code, whatever its folder.
    """
    p = PurePosixPath(path)
    if p.suffix.lower() in SNAPSHOT_SUFFIXES or ".approved." in p.name:
        return True
    if p.suffix.lower() in SOURCE_SUFFIXES:
        return False
    return any(part.lower() in SNAPSHOT_DIRS for part in p.parts[:-1])


def no_change(target: Target, diff: Diff) -> list[Finding]:
    """Return a `no-change` finding when base..head changes no file."""
    if len(diff.files) > 0:
        return []
    commits = target.commits
    if commits:
        detail = f"the branch has {commits} commit{'s' if commits != 1 else ''} but base..head is empty"
    else:
        detail = "the branch has no commits beyond its base"
    short = target.base[:12]
    return [
        finding(
            "no-change",
            f"nothing changed: {detail}",
            evidence=f"git diff {short}..{target.head[:12]} is empty",
        )
    ]


def test_only_change(diff: Diff) -> list[Finding]:
    """Return a `test-only-change` finding when tests or snapshots change and no source does."""
    tests = [f.path for f in diff.files if f.role == "test" or (f.role == "other" and is_snapshot_path(f.path))]
    if not tests:
        return []
    source = [f.path for f in diff.files if f.role == "source"]
    if source:
        return []
    shown = ", ".join(tests[:5]) + (f" (+{len(tests) - 5} more)" if len(tests) > 5 else "")
    others = [f.path for f in diff.files if f.path not in tests]
    evidence = "tests: " + "\n       ".join(tests[:20])
    if others:
        evidence += "\nother (not source): " + ", ".join(others[:10])
    return [
        finding(
            "test-only-change",
            f"the branch changes tests and no source: {shown}",
            file=tests[0] if len(tests) == 1 else None,
            evidence=evidence,
        )
    ]


# pytest would collect these names from any test module that imports them.
test_only_change.__test__ = False  # type: ignore[attr-defined]
