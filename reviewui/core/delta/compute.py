"""Compute the since-verdict view of a branch: what changed between the head judged and the head now.

The two patches are compared, each against its own base: the one judged
(`since_base..since`) and the one now (`base..head`). For a push on the same
base that is what the new commits changed in the branch's patch (a range-diff
of the agent's commits, summed); after a rebase it is the interdiff of the
two patches, so commits the base gained are never the agent's change. Files
are followed across renames between the two heads (`git diff -M`), and each
file's lines through the diff between the two heads (match.LineMap); hunks
are told apart by their bytes (an undecodable byte that changed is a change). Every
diff is read as the review's diff is (diff.py: bounded by the analysis caps;
a file over them is judged by its blob, as a binary one is).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from reviewui.core.delta.match import LineMap, State, interdiff, match_file
from reviewui.core.delta.model import FILE_HEADERS, Delta, HunkDelta
from reviewui.core.diff import Diff, load_diff
from reviewui.core.file_diff import FileDiff
from reviewui.core.revert import raw_hunks
from reviewui.core.state import hunk_digest

_LAZY = 20
"""Files between the two heads parsed one git call each up to this many; past it, one call for all."""


def compute_delta(repo_dir: str | Path, since_base: str, since: str, base: str, head: str) -> Delta:
    """The delta of `base..head` against the judged `since_base..since` (SHAs).

    Raises ReviewError when git cannot read a commit.
    """
    repo = str(repo_dir)
    between = load_diff(repo, since, head) if since != head else None
    return delta_of(load_diff(repo, since_base, since), load_diff(repo, base, head), between)


def delta_of(judged: Diff, now: Diff, between: Diff | None) -> Delta:
    """The delta of the patch `now` against the patch `judged`, `between` being the diff from the head
    judged to the head now (None when they are one commit): the one classification `reviewui delta`, the
    review screen and the queue's batched deltas (batch.py) share. Diffs load their patches if not yet.
    """
    judged.preload()
    now.preload()
    between_files = _between(between, judged, now)
    renamed = {f.old_path: f.path for f in between_files.values() if f.status == "renamed" and f.old_path}
    back = {new: old for old, new in renamed.items()}
    judged_files = {f.path: f for f in judged.files}
    entries: list[HunkDelta] = []
    gone: list[HunkDelta] = []
    used: set[str] = set()
    for f in now.files:
        of = judged_files.get(back.get(f.path, f.path))
        if of is not None:
            used.add(of.path)
        if not f.hunks:
            entries.append(HunkDelta(f.path, _file_header(f), _file_state(f, of), None))
            continue
        old = of.hunks if of is not None else ()
        lines = LineMap.from_hunks(between_files[f.path].hunks) if f.path in between_files else LineMap()
        m = match_file(old, f.hunks, lines, (_bodies(of), _bodies(f)) if of is not None else None)
        for h, state, was in zip(f.hunks, m.states, m.was, strict=True):
            assert of is not None or state == "new"
            prior = tuple((of.path, old[j].header) for j in was) if of is not None else ()
            text = interdiff([old[j] for j in was], h) if state == "changed" else ""
            entries.append(HunkDelta(f.path, h.header, state, h.index, prior, text, hunk_digest(h.text)))
        if of is not None:
            gone += [HunkDelta(of.path, old[j].header, "gone", None) for j in m.gone]
    for of in judged.files:
        if of.path not in used:
            gone += ([HunkDelta(of.path, h.header, "gone", None) for h in of.hunks] if of.hunks
                     else [HunkDelta(of.path, _file_header(of), "gone", None)])
    return Delta(since=judged.head, since_base=judged.base, head=now.head, base=now.base, hunks=tuple(entries + gone),
                 renamed=renamed)


def _between(between: Diff | None, judged: Diff, now: Diff) -> dict[str, FileDiff]:
    """The files that differ between the two heads and matter here (in both patches), by their path now."""
    if between is None:
        return {}
    wanted = {f.path for f in now.files} | {f.path for f in judged.files}
    files = {f.path: f for f in between.files if f.path in wanted or (f.old_path or "") in wanted}
    if len(files) > _LAZY:
        between.preload()  # one git call for all, rather than one per file
    return files


def _bodies(f: FileDiff) -> list[str]:
    """Each hunk's identity as bytes (both sides' lines), so an undecodable byte that changed is a change:
    the decoded text replaces every such byte alike."""
    raw = raw_hunks(f.raw_patch)
    if len(raw) != len(f.hunks):
        return [hunk_digest(h.text) for h in f.hunks]
    return [hashlib.sha256(b"".join(r.old_lines) + b"\0\0" + b"".join(r.new_lines)).hexdigest() for r in raw]


def _file_header(f: FileDiff) -> str:
    """The header of a file's own entry (FILE_HEADERS): why it has no text hunks."""
    if f.over_cap:
        return FILE_HEADERS[1]
    if f.binary:
        return FILE_HEADERS[0]
    if f.mode_changed:
        return FILE_HEADERS[2]
    return FILE_HEADERS[3]


def _file_state(f: FileDiff, judged: FileDiff | None) -> State:
    """A file without text hunks, judged by what it is now: its status, blob and mode."""
    if judged is None:
        return "new"
    same = (f.status, f.new_blob, f.new_mode, f.old_blob if f.status == "deleted" else None) == (
        judged.status, judged.new_blob, judged.new_mode, judged.old_blob if judged.status == "deleted" else None)
    return "unchanged" if same and not judged.hunks else "changed"
