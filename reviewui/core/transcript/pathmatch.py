"""Path matching shared by hunk linking and script attribution: an agent's absolute path against a diff's relative one."""

from __future__ import annotations


def norm_path(path: str) -> str:
    """Normalize a path for suffix matching (forward slashes, no leading `./`)."""
    p = path.replace("\\", "/").strip()
    while p.startswith("./"):
        p = p[2:]
    return p


def paths_match(transcript_path: str, diff_path: str) -> bool:
    """True when two paths name the same file, one possibly a longer (absolute) form of the other."""
    a, b = norm_path(transcript_path), norm_path(diff_path)
    if not a or not b:
        return False
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)
