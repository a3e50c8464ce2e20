"""`undeclared-write`: files the branch changes that the agent never said it would.

When an agent is asked to emit one `TOUCH: <path>` line per intended write
before writing, the declaration is evidence that exists before any diff
does. A changed file missing from it is a warning; a declared file the
branch left alone is an info note. With no declarations at all the rule
is silent: there is nothing to compare against.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from reviewui.core.findings.model import Finding, finding

if TYPE_CHECKING:
    from reviewui.core.diff import Diff
    from reviewui.core.target import Target
    from reviewui.core.transcript import Transcript


def undeclared_write(target: Target, diff: Diff, transcript: Transcript | None) -> list[Finding]:
    """Return warnings for changed files not declared with TOUCH: and infos for declared, unchanged ones."""
    if transcript is None:
        return []
    declared_raw = [str(p) for p in (transcript.touch_declared() or [])]
    declared = [n for n in (_normalize(p, target) for p in declared_raw) if n]
    if not declared:
        return []
    out: list[Finding] = []
    matched: set[str] = set()
    shown = ", ".join(declared_raw[:10]) + (f" (+{len(declared_raw) - 10} more)" if len(declared_raw) > 10 else "")
    for f in diff.files:
        names = [f.path] + ([f.old_path] if f.old_path else [])
        hits = [d for d in declared if any(_covers(d, n) for n in names)]
        matched.update(hits)
        if hits:
            continue
        out.append(
            finding(
                "undeclared-write",
                f"{f.path} was {f.status} but no TOUCH: line declared it",
                file=f.path,
                evidence=f"declared: {shown}",
            )
        )
    for d in declared:
        if d in matched:
            continue
        out.append(
            finding(
                "undeclared-write",
                f"{d} was declared with TOUCH: but the branch does not change it",
                file=None if _is_pattern(d) else d,
                evidence=f"TOUCH: {d}",
                severity="info",
            )
        )
    return out


def _normalize(path: str, target: Target) -> str:
    """Make a declared path repository-relative (`./a`, `/abs/repo/a` and `a` all mean `a`)."""
    p = path.strip().strip("`'\"").replace("\\", "/")
    root = str(target.repo_dir).replace("\\", "/").rstrip("/")
    if root and p.startswith(root + "/"):
        p = p[len(root) + 1 :]
    while p.startswith("./"):
        p = p[2:]
    return str(PurePosixPath(p)) if p and p != "." else ""


def _is_pattern(d: str) -> bool:
    return any(c in d for c in "*?[") or d.endswith("/")


def _covers(declared: str, path: str) -> bool:
    """True when a declaration names `path`: the path itself, a folder above it, or a glob."""
    if declared == path:
        return True
    if path.startswith(declared.rstrip("/") + "/"):
        return True
    return _is_pattern(declared) and fnmatchcase(path, declared)
