"""Build a real repo with a branch and return what the finding rules take."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from reviewui.core.config import Settings
from reviewui.core.diff import Diff, load_diff
from reviewui.core.findings.model import Finding
from reviewui.core.target import Target, resolve_target
from tests.gitrepo import make_repo


def branch(
    root: Path, base: Mapping[str, str | bytes | None], change: Mapping[str, str | bytes | None]
) -> tuple[Target, Diff, Settings]:
    """Commit `base` on main and `change` on agent/work; return (target, diff, settings)."""
    make_repo(root, base, change)
    target = resolve_target(root, "agent/work", "main")
    return target, load_diff(str(target.repo_dir), target.base, target.head), Settings()


def kinds(findings: list[Finding]) -> list[str]:
    """The kinds of `findings`, in order."""
    return [f.kind for f in findings]


def only(findings: list[Finding], kind: str | None = None) -> Finding:
    """The single finding (of `kind`), failing the test with the whole list otherwise."""
    hits = [f for f in findings if kind is None or f.kind == kind]
    assert len(hits) == 1, [f"{f.kind}: {f.message}" for f in findings]
    return hits[0]
