"""`not-analysed`: changed files static analysis left alone, so a clean report says nothing about them.

A file over `max-analysis-bytes` (either side of the change) is never read
whole, parsed or diffed line by line; one past `max-diff-bytes` of changes
in all has no hunks; a Python file past `max-analysis-total-bytes`, or whose
syntax tree nests deeper than `max-analysis-depth`, is not parsed. Either way every
rule is silent about it, which is exactly what a hostile branch would
want: this rule makes the silence visible. Real binary files (a NUL in
their first 8000 bytes, git's own test) are not reported: no rule reads
them anyway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewui.core.bounded import analysis_limits, over_bytes
from reviewui.core.findings.model import Finding, finding
from reviewui.core.git import blob_sizes, read_blobs

if TYPE_CHECKING:
    from reviewui.core.diff import Diff
    from reviewui.core.findings.source import TreeSource

_SNIFF = 8000
"""Bytes git looks at to call a file binary."""


def not_analysed(repo_dir: str, diff: Diff, head: TreeSource) -> list[Finding]:
    """One `not-analysed` warning per changed file over the byte cap or (Python) nested too deeply."""
    cap = analysis_limits().bytes
    files = [f for f in diff.files if f.new_mode != "120000"]  # a link's blob is its target: symlinks.py
    sizes = blob_sizes(repo_dir, [b for f in files for b in (f.old_blob, f.new_blob) if b])
    big = {f.path: max(sizes.get(f.old_blob or "", 0), sizes.get(f.new_blob or "", 0)) for f in files}
    big = {p: n for p, n in big.items() if n > cap}
    heads = {f.path: f.new_blob or f.old_blob or "" for f in files if f.path in big}
    text_like = _text_like(repo_dir, heads)
    hidden = diff.not_shown()  # past the diff's total budget too: no hunks, so no rule saw its lines
    out: list[Finding] = []
    for f in files:
        if f.path in big:
            if f.path.endswith((".py", ".pyi")) or text_like.get(f.path, False):
                out.append(_finding(f.path, over_bytes(big[f.path], cap) or "over the cap (max-analysis-bytes)"))
            continue
        if f.path in hidden and not f.binary:
            out.append(_finding(f.path, hidden[f.path]))
            continue
        if f.status == "deleted" or not f.path.endswith((".py", ".pyi")):
            continue
        head.tree(f.path)
        if f.path in head.skipped:
            out.append(_finding(f.path, head.skipped[f.path]))
    return out


def _text_like(repo_dir: str, blobs: dict[str, str]) -> dict[str, bool]:
    """Path -> True when the blob's first 8000 bytes hold no NUL (git would diff it as text)."""
    by_sha = dict(read_blobs(repo_dir, list(dict.fromkeys(blobs.values())), cap=_SNIFF))
    return {p: (b := by_sha.get(sha)) is not None and b"\0" not in b.data[:_SNIFF] for p, sha in blobs.items()}


def _finding(path: str, reason: str) -> Finding:
    return finding(
        "not-analysed",
        f"not analysed: {reason}; no other rule read this file",
        file=path,
        evidence="raise max-analysis-bytes / max-analysis-depth in the user config to analyse it",
    )
