"""The queue's git work for thousands of branches in a handful of processes.

- `list_refs`: one `for-each-ref` (newest first, at most MAX_BRANCHES), and
  when it is full a second one that only counts, so a cut is always said;
- `branch_graph`: one `rev-list --boundary --parents` of every head against
  the base: each branch's own commits, and its merge-base (the one boundary
  commit its commits reach; a branch with several asks `merge-base` alone);
- `diff_sizes`: one `diff-tree --stdin --shortstat` for every (base, head);
- `with_transcript`: one `cat-file --batch-check` for every head and path.
Everything here is plumbing: the reviewer's diff and log settings change nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Sequence

from reviewui.core.git import run_git

MAX_BRANCHES = 10_000
"""Branches listed at most (a hostile remote could push a million refs); the rest are counted and said."""
_TRAILER = re.compile(r"^(Agent|Task|Task-Id|Issue)\s*:\s*(.+)$", re.IGNORECASE)
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_BIG = "core.bigFileThreshold=1m"  # sizes only: a big file counts as a binary change, never read whole


@dataclass(frozen=True)
class Ref:
    """One listed branch."""

    name: str
    """The full ref name."""
    short: str
    """`agent/x`, or `origin/agent/x` for a remote's."""
    head: str
    when: datetime
    """The head commit's committer date."""
    agent: str | None
    task: str | None


def list_refs(repo: Path, patterns: Sequence[str], limit: int = MAX_BRANCHES) -> tuple[list[Ref], int]:
    """The refs matching `patterns`, newest commit first, at most `limit`; and how many more there are."""
    fmt = "%(refname)%00%(objectname)%00%(committerdate:unix)%00%(trailers:only,unfold)%00%01"
    raw = run_git(repo, "for-each-ref", "--sort=-committerdate", f"--format={fmt}", "--count", str(limit + 1),
                  *patterns)
    out: list[Ref] = []
    for record in raw.decode("utf-8", "replace").split("\x01"):
        parts = record.strip("\n").split("\x00")
        if len(parts) < 4 or not parts[0]:
            continue
        name, head, when, trailers = parts[0], parts[1], parts[2], parts[3]
        found = {m.group(1).lower(): m.group(2).strip()[:80]
                 for line in trailers.splitlines() if (m := _TRAILER.match(line))}
        short = name.removeprefix("refs/heads/").removeprefix("refs/remotes/")
        stamp = datetime.fromtimestamp(int(when) if when.isdigit() else 0, tz=timezone.utc)
        task = found.get("task") or found.get("task-id") or found.get("issue")
        out.append(Ref(name, short, head, stamp, found.get("agent"), task))
    omitted = 0
    if len(out) > limit:  # one more than the cap came back: count them all (one byte each)
        out = out[:limit]
        every = run_git(repo, "for-each-ref", "--format=.", *patterns)
        omitted = max(0, every.count(b"\n") - limit)
    return out, omitted


@dataclass(frozen=True)
class BranchGraph:
    """The commits of every head that the base does not have, and where each head leaves the base."""

    parents: dict[str, tuple[str, ...]]
    """Commit (not in the base) -> its parents."""
    boundary: frozenset[str]
    """Commits of the base that a listed commit has as a parent."""

    def own_commits(self, head: str, limit: int = 100_000) -> frozenset[str]:
        """The commits of base..head (empty when the head is in the base)."""
        seen: set[str] = set()
        todo = [head] if head in self.parents else []
        while todo and len(seen) < limit:
            c = todo.pop()
            if c in seen:
                continue
            seen.add(c)
            todo.extend(p for p in self.parents.get(c, ()) if p in self.parents and p not in seen)
        return frozenset(seen)

    def joined(self, other: BranchGraph) -> BranchGraph:
        """This graph and `other` (another rev-list against the same base) as one."""
        return BranchGraph({**self.parents, **other.parents}, self.boundary | other.boundary)

    def merge_base(self, head: str) -> str | None:
        """The merge-base of `head` with the base when the graph tells it alone: `head` itself when the base
        has it, the one boundary commit its own commits reach; None when it takes `git merge-base`."""
        if head not in self.parents:
            return head
        reached = {p for c in self.own_commits(head) for p in self.parents[c] if p in self.boundary}
        return next(iter(reached)) if len(reached) == 1 else None


def branch_graph(repo: Path, base_tip: str, heads: Iterable[str]) -> BranchGraph:
    """One `rev-list` of every head not in `base_tip`, with parents and the boundary."""
    asks = "".join(f"{h}\n" for h in dict.fromkeys(heads))
    parents: dict[str, tuple[str, ...]] = {}
    boundary: set[str] = set()
    if asks:
        out = run_git(repo, "rev-list", "--boundary", "--parents", "--stdin", f"^{base_tip}",
                      input=asks.encode()).decode("ascii", "replace")
        for line in out.splitlines():
            words = line.split()
            if not words:
                continue
            if words[0].startswith("-"):
                boundary.add(words[0][1:])
            else:
                parents[words[0]] = tuple(words[1:])
    return BranchGraph(parents, frozenset(boundary))


def merge_base(repo: Path, base_tip: str, head: str) -> str:
    """`git merge-base` of one head (when the graph cannot tell it); the base tip when there is none."""
    return run_git(repo, "merge-base", base_tip, head, check=False).decode().strip() or base_tip


def diff_sizes(repo: Path, pairs: Iterable[tuple[str, str]]) -> dict[str, tuple[int, int, int]]:
    """Head -> (files, added, removed) of base..head for each (base, head), from one `diff-tree --stdin`."""
    lines = "".join(f"{head} {base}\n" for base, head in dict.fromkeys(pairs) if base != head)
    found: dict[str, tuple[int, int, int]] = {}
    if not lines:
        return found
    out = run_git(repo, "diff-tree", "--stdin", "-r", "-M", "--shortstat", "--no-ext-diff", "--no-textconv",
                  input=lines.encode(), config=(_BIG,)).decode("utf-8", "replace")
    head = ""
    for line in out.splitlines():
        text = line.strip()
        if _SHA.match(text):
            head = text
        elif head and text:
            nums = {w: int(n) for n, w in re.findall(r"(\d+) (file|insertion|deletion)", text)}
            found[head] = (nums.get("file", 0), nums.get("insertion", 0), nums.get("deletion", 0))
    return found


def with_transcript(repo: Path, heads: Sequence[str], paths: Sequence[str]) -> set[str]:
    """The heads whose tree holds a transcript at one of `paths` (one `cat-file --batch-check`)."""
    if not heads or not paths:
        return set()
    asks = [f"{h}:{p}" for h in heads for p in paths]
    out = run_git(repo, "cat-file", "--buffer", "--batch-check=%(objectname) %(objecttype)",
                  input="\n".join(asks).encode() + b"\n", check=False).decode("utf-8", "replace").splitlines()
    found: set[str] = set()
    for ask, line in zip(asks, out, strict=False):
        if line.endswith(" blob"):
            found.add(ask.split(":", 1)[0])
    return found
