"""What makes every run of a sweep look alike to a test that only looks at metadata.

A test cannot read a changed source file or the run's `.git` without being
seen (bite/origin.py: it is then a reader and its failures are no bites). It
can *stat* them without being seen: no audit event, no inotify event. Two
things a stat could tell a revert's run by, and how each is taken away by
construction, for every run of the sweep (baseline, controls, reverts batched
or alone, guards):

- **A changed file's size.** Each changed file (modified or renamed, not a
  link) of a format with an inert tail (`style_of`: `# ---` comment lines, clean to a linter, for
  Python, TOML, YAML, INI, Makefiles and the like; spaces for JSON) is
  presented padded at its end to one size: the head's size plus every byte
  the file's hunks could bring back plus `SLACK`. The head's file, each revert
  of it and each guard edit are all that size (`pad`), so `st_size` and
  `st_blocks` are the same in every run. Others (HTML, CSS, templates: a pad
  would change what they render) keep their size. An edit longer than the
  size (past the slack) is written as it is.
- **Which objects git's store holds.** The pristine tree's store holds, in
  one pack (`stock-*`), those of every single-hunk revert of the diff and of
  the null revert of every changed file (blob, the trees on its path, the
  commit each run would have) before any run. A revert's own commit then adds
  nothing (git writes no object it has; a batch's stager places none it has:
  staging.py): each run sees the same store, whichever hunk it reverted, and no
  path a test could guess exists in one run and not another. A run alone
  (a revert, a guard edit, a control) then moves whatever its own commit
  wrote beyond the pristine's store into a pack named by a random object
  (`hide_new_objects`): a guard edit's objects, not stocked (guards are made
  while the baseline runs), exist under no name a test can work out.

`AlikeRuns.of(diff, head)` is what a sweep hands its scratch pool; the pristine
build (`scratch_build.pristine`) calls `pad_tree` before committing the head's
tree and `stock` after; a scratch pads what it writes (`run/scratch.py`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from reviewui.core.diff import Diff
from reviewui.core.revert import RevertError, raw_hunk_for, revert_bytes
from reviewui.core.run.scratch_build import restamp, scratch_git
from reviewui.core.run.staging import STOCK, Stager

SLACK = 128
"""Bytes of room past what a revert can bring back: a guard edit (`True` for a name, a
`pass`, `return None` for a body) grows a file by less."""
MAX_VARIANTS = 2_000
"""Reverts whose objects are stocked in the pristine (a bigger diff stocks the first ones)."""
_HASH_SUFFIXES = frozenset({".py", ".pyi", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".env", ".properties", ".mk"})
_HASH_NAMES = frozenset({"Makefile", "Dockerfile", "Justfile", "Rakefile", "Gemfile"})
"""Files whose every reader takes a line starting with `#` for a comment: padded with one."""
_SPACE_SUFFIXES = frozenset({".json"})
"""Files whose readers skip whitespace after the last token: padded with spaces."""


def style_of(path: str) -> str | None:
    """How a file at `path` is padded: "#" (a comment line), " " (spaces), None (it is not)."""
    name = path.rpartition("/")[2]
    suffix = "." + name.rpartition(".")[2].lower() if "." in name else ""
    if suffix in _HASH_SUFFIXES or name in _HASH_NAMES:
        return "#"
    return " " if suffix in _SPACE_SUFFIXES else None


LINE = 72
"""The longest pad line, newline apart: shorter than any line-length rule a linter run as a test has."""


def pad(content: bytes, size: int, style: str = "#") -> bytes:
    """`content` with an inert tail making it exactly `size` bytes (comment lines, or for style " "
    spaces and a newline), or `content` unchanged when it is that size already or no tail fits."""
    if style == " ":
        return content + b" " * (size - len(content) - 1) + b"\n" if size > len(content) else content
    gap = b"" if not content or content.endswith(b"\n") else b"\n"
    tail = _comments(size - len(content) - len(gap))
    return content if tail is None else content + gap + tail


def _comments(room: int) -> bytes | None:
    """Exactly `room` bytes of comment lines no linter minds (`#` alone, or `# ` and dashes: no
    trailing space, none longer than LINE), None when none make that many (1 or 3 bytes, or fewer than 0)."""
    if room < 0 or room in (1, 3):
        return None
    lines: list[bytes] = []
    while room:
        n = min(room, LINE + 1)
        if room - n in (1, 3):
            n -= 4  # leave a remainder that is a line of its own
        lines.append(b"#\n" if n == 2 else b"# " + b"-" * (n - 3) + b"\n")
        room -= n
    return b"".join(lines)


def unpad(content: bytes, reserve: int) -> bytes:
    """The head's own bytes of a file the pristine padded by `reserve` bytes."""
    return content[:len(content) - reserve] if len(content) >= reserve else content


@dataclass(frozen=True)
class AlikeRuns:
    """How the scratch of commit `head` is built so its runs look alike (see the module)."""

    head: str
    """The commit these are for; other commits' scratches are built plain."""
    reserve: dict[str, int] = field(default_factory=dict)
    """Path -> the bytes its pad adds to the head's file."""
    diff: Diff | None = field(default=None, compare=False, repr=False)

    @staticmethod
    def of(diff: Diff, head: str) -> AlikeRuns:
        """The padding and stock for `diff`'s sweep at commit `head`."""
        reserve: dict[str, int] = {}
        for f in diff.files:
            if f.binary or f.symlink or f.status not in ("modified", "renamed") or style_of(f.path) is None:
                continue
            back = 0
            for h in f.hunks:
                try:
                    back += sum(len(line) for line in raw_hunk_for(f, h).old_lines)
                except (RevertError, ValueError):
                    continue
            reserve[f.path] = back + SLACK
        return AlikeRuns(head, reserve, diff)

    @property
    def key(self) -> str:
        """What names the pristine built this way (beside the commit's id)."""
        text = repr(sorted(self.reserve.items())) + "".join(
            f"{f.path}\0{f.old_blob}\0{f.new_blob}\0" for f in (self.diff.files if self.diff else ()))
        return hashlib.sha1(text.encode("utf-8", "surrogateescape"), usedforsecurity=False).hexdigest()[:12]

    def pad_tree(self, tree: Path) -> list[str]:
        """Pad each file of `tree` (the head's, just written) that has a reserve; return their paths."""
        done: list[str] = []
        for rel, extra in sorted(self.reserve.items()):
            path = tree / rel
            if path.is_symlink() or not path.is_file():
                continue
            data = path.read_bytes()
            path.write_bytes(pad(data, len(data) + extra, style_of(rel) or "#"))
            done.append(rel)
        return done

    def stock(self, tree: Path) -> None:
        """Write into `tree`'s own store, loose, the objects of every variant a run of the sweep can
        commit: each file's null revert (the head's own) and each single-hunk revert."""
        if self.diff is None:
            return
        stager = Stager.of(tree)
        if stager is None:
            return
        made = 0
        for f in self.diff.files:
            if f.binary:
                continue
            path = tree / f.path
            if path.is_symlink():
                continue
            head = path.read_bytes() if path.is_file() else b""
            own = unpad(head, self.reserve[f.path]) if f.path in self.reserve else head
            if path.is_file():
                stager.stage({f.path: head}, None)
            for h in f.hunks[:max(0, MAX_VARIANTS - made)]:
                try:
                    out = revert_bytes(own, raw_hunk_for(f, h))
                except (RevertError, ValueError):
                    continue
                after = None if not out and f.status == "added" else \
                    pad(out, len(head), style_of(f.path) or "#") if f.path in self.reserve else out
                stager.stage({f.path: after}, None)
                made += 1
        # One pack of them all (few files to copy into each slot, as few as the plain tree's), named
        # `stock-*` so a stager knows them for objects a commit already has (staging.py).
        gd, store = str(tree / ".git"), tree / ".git" / "objects"
        ids = "".join(rel.replace("/", "") + "\n" for rel in sorted(_loose(store)))
        if ids:
            scratch_git(tree, gd, "pack-objects", "-q", str(store / "pack" / STOCK), stdin=ids.encode())
            scratch_git(tree, gd, "prune-packed", "-q")


def _loose(store: Path) -> set[str]:
    """The loose objects (`<xx>/<rest>`) of object store `store`."""
    return {f"{p.parent.name}/{p.name}" for p in store.glob("??/*") if not p.name.startswith(".")}


def hide_new_objects(tree: Path, pristine: Path) -> None:
    """Move the loose objects a commit in scratch `tree` wrote that its `pristine` does not hold (a
    guard edit's blob, trees and commit, whose ids a test could work out) into one pack named by a
    random object beside them: every run alone then holds the pristine's loose objects and one pack
    whose name no test can guess. A null edit (a control) writes nothing new: its pack holds the
    random object alone."""
    store, fans = tree / ".git" / "objects", {p.name for p in (pristine / ".git" / "objects").glob("??")}
    gd = str(tree / ".git")
    scratch_git(tree, gd, "hash-object", "-w", "--stdin", stdin=os.urandom(32).hex().encode())  # unreachable
    new = sorted(_loose(store) - _loose(pristine / ".git" / "objects"))
    ids = "".join(rel.replace("/", "") + "\n" for rel in new)
    scratch_git(tree, gd, "pack-objects", "-q", str(store / "pack" / "pack"), stdin=ids.encode())
    for rel in new:
        (store / rel).unlink()
    for fan in {rel[:2] for rel in new} - fans:
        with contextlib.suppress(OSError):
            (store / fan).rmdir()
    restamp(tree, [])
