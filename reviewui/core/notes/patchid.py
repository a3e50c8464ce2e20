"""The stable patch-id of a branch's change, to tell a rebase from a rewrite.

A verdict records `git patch-id --stable` of the diff base..head. When the
branch later points at another commit, an equal patch-id means the change is
the same patch on a new base (a rebase, a reworded commit): the old verdict
still applies. A different one means the code under review changed.

The diff is made with plumbing (`git diff-tree`), so the reviewer's diff
settings (colour, prefixes, external diff tools, textconv, rename detection)
cannot change the id. `--full-index` writes whole blob ids on the `index`
lines, which patch-id hashes for binary files: two different binary edits
never share an id, and the id does not depend on how far a clone
abbreviates object names (plain `git diff` output would).

Caveat inherited from git: patch-id ignores whitespace, so a change that only
re-indents lines (meaningful in Python) keeps the same id.
"""

from __future__ import annotations

from pathlib import Path

from reviewui.core.git import run_git

EMPTY_PATCH_ID = ""
"""The patch-id of an empty diff (base and head have the same tree)."""


def patch_id(repo_dir: str | Path, base: str, head: str) -> str:
    """Return the stable patch-id (40 hex) of the diff `base`..`head`.

    Returns EMPTY_PATCH_ID ("") when the diff is empty. Raises ReviewError
    when `base` or `head` names no commit.
    """
    diff = run_git(
        repo_dir,
        "diff-tree",
        "-p",
        "-r",
        "--full-index",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        f"{base}^{{commit}}",
        f"{head}^{{commit}}",
        "--",
    )
    if not diff.strip():
        return EMPTY_PATCH_ID
    # patch-id wants a "diff --git" stream, which diff-tree -p emits.
    out = run_git(repo_dir, "patch-id", "--stable", input=diff).decode("ascii", "replace")
    first = out.split()
    return first[0] if first else EMPTY_PATCH_ID
