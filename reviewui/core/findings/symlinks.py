"""`symlink-outside-tree`: links the branch adds or changes that point out of the repository.

A symlink is data to reviewui: it is checked in as a link (into the
scratch too) and never followed. A link leading out of the tree (an
absolute target, `..` past the root, or into `.git`) is how a test could
reach the reviewer's files, so the reviewer is told about each one.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from reviewui.core.findings.model import Finding, finding
from reviewui.core.git import read_blobs

if TYPE_CHECKING:
    from reviewui.core.diff import Diff

LINK_MODE = "120000"
_MAX_TARGET = 4096
"""PATH_MAX: a link target longer than this is not a target any system would follow."""


def outside_target(link: str, target: str) -> str | None:
    """Why the link at repository path `link` pointing at `target` leaves the tree, or None when it stays inside."""
    if not target:
        return "an empty target"
    if target.startswith("/"):
        return "an absolute path"
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(link), target))
    if joined == ".." or joined.startswith("../"):
        return "a path above the repository"
    if joined.split("/")[0] == ".git":
        return "the repository's .git"
    return None


def symlink_outside_tree(repo_dir: str, diff: Diff) -> list[Finding]:
    """One `symlink-outside-tree` warning per symlink on the branch side whose target leaves the tree."""
    links = {f.path: f.new_blob for f in diff.files if f.new_mode == LINK_MODE and f.new_blob and f.status != "deleted"}
    targets = dict(read_blobs(repo_dir, list(dict.fromkeys(links.values())), cap=_MAX_TARGET))
    out: list[Finding] = []
    for path, sha in links.items():
        blob = targets.get(sha)
        if blob is None:
            continue
        target = blob.data.decode("utf-8", "replace")
        why = "a target longer than PATH_MAX" if blob.cut else outside_target(path, target)
        if why is not None:
            out.append(finding(
                "symlink-outside-tree",
                f"{path} is a symlink to {why}; reviewui checks it in as a link and never follows it",
                file=path,
                evidence=f"{path} -> {target[:200]}"  # drawn through safe_text by every front end,
            ))
    return out
