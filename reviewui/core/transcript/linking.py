"""Which turn wrote which hunk: matching diff hunks to transcript edits by path and content.

A hunk is linked to every turn whose edits put one of the hunk's added lines
into that file (or took out one of its removed lines, for a hunk that only
removes). Paths match by suffix, because agents write absolute paths
(`/home/u/repo/src/a.py`) while the diff is repo-relative (`src/a.py`).
Lines too common to identify anything (`}`, `pass`, blank) do not count on
their own. Edits whose content the transcript does not record (`sed -i`)
link only to hunks of their file that no content match claimed. Hunks are
duck-typed: anything with `file`, `index` and `lines` (each with `kind` and
`text`) works, so this module does not import the diff model.

Authorship notes (git-ai, read by `core/notes/authorship.py`) are a second
source: `authored` maps a file's head line numbers (a line's `new_no`) to
the agent session that wrote it. A hunk no edit content matched, whose
added lines the notes give to one of the transcript's own sessions, links to
the turns that edited its file; a file the notes give to any agent is not
`unattributed` (it is in `by_notes`): `unattributed` is what neither the
notes nor the transcript account for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from reviewui.core.transcript.model import Transcript
from reviewui.core.transcript.patches import changed_lines
from reviewui.core.transcript.pathmatch import norm_path, paths_match

HunkKey = tuple[str, int]

_TRIVIAL = frozenset(
    "pass else: else end return break continue try: finally: except: } { ); ), ]; }; */ /* */ "
    "endif fi done esac then do begin default: @end".split()
)


@dataclass(frozen=True)
class HunkLinks:
    """The hunk ↔ turn links of one transcript and one diff."""

    by_hunk: dict[HunkKey, tuple[int, ...]] = field(default_factory=dict)
    """(file, hunk index) → turn indexes that produced or touched the hunk's lines."""
    by_turn: dict[int, tuple[HunkKey, ...]] = field(default_factory=dict)
    """Turn index → the (file, hunk index) pairs it produced, in diff order."""

    def turns_for(self, file: str, index: int) -> list[int]:
        """Return the turns that wrote hunk `index` of `file`; [] means "not in transcript"."""
        return list(self.by_hunk.get((file, index), ()))

    def hunks_for(self, turn_index: int) -> list[HunkKey]:
        """Return the (file, hunk index) pairs turn `turn_index` produced, in diff order."""
        return list(self.by_turn.get(turn_index, ()))

    by_file: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Diff file → the turns that produced it (its hunks' turns, else turns naming it, else the script's runner)."""
    by_script: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Diff file → the turns that ran the script that wrote it (files no edit names)."""
    unattributed: tuple[str, ...] = ()
    """Diff files neither a turn nor an authorship note accounts for, in diff order."""
    by_notes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Diff file → the agent sessions its authorship notes give its added lines to (files no turn explains)."""

    def files_for(self, turn_index: int) -> list[str]:
        """Return the diff files turn `turn_index` produced hunks in, in diff order."""
        return list(dict.fromkeys(f for f, _ in self.by_turn.get(turn_index, ())))

    def turns_for_file(self, file: str) -> list[int]:
        """Return the turns that produced diff file `file`; [] when none did (see `unattributed`)."""
        return list(self.by_file.get(file, ()))

    def is_unattributed(self, file: str) -> bool:
        """True when no turn accounts for diff file `file`."""
        return file in self.unattributed

    def note(self) -> str | None:
        """The transcript-level note about files the transcript does not explain, or None."""
        if not self.unattributed:
            return None
        n = len(self.unattributed)
        shown = ", ".join(self.unattributed[:10]) + (" …" if n > 10 else "")
        return f"unattributed: {n} changed file{'s' if n != 1 else ''} no turn accounts for: {shown}"


def git_base_reader(repo_dir: str | Path, base: str) -> Callable[[str], str | None]:
    """A reader of repo-relative paths at commit `base` (None when the file is not there), for `edits-existing-test`."""
    from reviewui.core.git import show_file

    def read(path: str) -> str | None:
        data = show_file(repo_dir, base, path)
        return data.decode("utf-8", "replace") if data is not None else None

    return read


def significant(line: str) -> bool:
    """True when a (stripped) line is distinctive enough to identify who wrote it."""
    return len(line) >= 4 and line not in _TRIVIAL and any(c.isalnum() for c in line)


@dataclass
class _EditLines:
    turn: int
    path: str
    added: set[str]
    removed: set[str]
    contentless: bool


def _edit_index(transcript: Transcript) -> dict[str, list[_EditLines]]:
    """Edits grouped by file name, with the stripped lines each adds and removes."""
    out: dict[str, list[_EditLines]] = {}
    for t in transcript.turns:
        for e in t.edits:
            added, removed = changed_lines(e)
            entry = _EditLines(
                t.index,
                e.path,
                {s for s in (ln.strip() for ln in added) if s},
                {s for s in (ln.strip() for ln in removed) if s},
                e.operation in ("shell", "delete") or not (added or removed),
            )
            out.setdefault(norm_path(e.path).rsplit("/", 1)[-1], []).append(entry)
    return out


def _matches(entry: _EditLines, added: list[str], removed: list[str]) -> bool:
    sig_added = [a for a in added if significant(a)]
    if sig_added:
        return any(a in entry.added for a in sig_added)
    if added and all(a in entry.added for a in added):
        return True
    sig_removed = [r for r in removed if significant(r)]
    if sig_removed:
        return any(r in entry.removed for r in sig_removed)
    return bool(removed) and all(r in entry.removed for r in removed)


def _agent_sessions(authored: Mapping[str, Mapping[int, Any]], file: str, numbers: Iterable[int]) -> set[str]:
    """The agent sessions the notes give these head lines of `file` to."""
    per = authored.get(file, {})
    return {a.session for a in (per.get(n) for n in numbers) if a is not None and a.is_agent}


def link_hunks(transcript: Transcript, hunks: Iterable[Any], files: Iterable[str] = (),
               authored: Mapping[str, Mapping[int, Any]] | None = None, sessions: Iterable[str] = ()) -> HunkLinks:
    """Link each hunk to the turns whose edits produced or touched its lines, and each diff file to its turns.

    `hunks` are `reviewui.core.hunks.Hunk`-shaped objects (attributes `file`,
    `index`, `lines`; each line has `kind` in added/removed/context and `text`).
    `files` adds diff files that have no hunks (binary, renamed, mode-only).
    `authored` (head file → line number → an `Author` of core/notes/authorship)
    and `sessions` (the transcript's own session ids) add the authorship
    notes' links. A file neither accounts for is listed in `unattributed`.
    """
    authored = authored or {}
    own = frozenset(sessions)
    index = _edit_index(transcript)
    by_hunk: dict[HunkKey, tuple[int, ...]] = {}
    by_turn: dict[int, list[HunkKey]] = {}
    added_lines: dict[str, list[str]] = {}
    for h in hunks:
        key: HunkKey = (h.file, h.index)
        added_lines.setdefault(h.file, []).extend(s for s in (ln.text.strip() for ln in h.lines if ln.kind == "added") if s)
        candidates = [
            e for e in index.get(norm_path(h.file).rsplit("/", 1)[-1], ()) if paths_match(e.path, h.file)
        ]
        if not candidates:
            by_hunk[key] = ()
            continue
        added = [s for s in (ln.text.strip() for ln in h.lines if ln.kind == "added") if s]
        removed = [s for s in (ln.text.strip() for ln in h.lines if ln.kind == "removed") if s]
        turns = sorted({e.turn for e in candidates if not e.contentless and _matches(e, added, removed)})
        if not turns:
            turns = sorted({e.turn for e in candidates if e.contentless})
        if not turns and own and _agent_sessions(
                authored, h.file, (ln.new_no for ln in h.lines if ln.kind == "added" and getattr(ln, "new_no", None))) & own:
            turns = sorted({e.turn for e in candidates})  # the notes say this session wrote it: its edits of the file
        by_hunk[key] = tuple(turns)
        for t in turns:
            by_turn.setdefault(t, []).append(key)
    by_file, by_script, unattributed = _link_files(transcript, index, by_hunk, files, added_lines)
    by_notes: dict[str, tuple[str, ...]] = {}
    for f in unattributed:
        who = _agent_sessions(authored, f, authored.get(f, {}).keys())
        if who:
            by_notes[f] = tuple(sorted(who))
    unattributed = tuple(f for f in unattributed if f not in by_notes)
    return HunkLinks(by_hunk, {t: tuple(v) for t, v in by_turn.items()}, by_file, by_script, unattributed, by_notes)


def _link_files(
    transcript: Transcript, index: dict[str, list[_EditLines]], by_hunk: dict[HunkKey, tuple[int, ...]],
    extra: Iterable[str], added_lines: dict[str, list[str]],
) -> tuple[dict[str, tuple[int, ...]], dict[str, tuple[int, ...]], tuple[str, ...]]:
    from reviewui.core.transcript.attribution import ScriptRuns

    turns: dict[str, set[int]] = {}
    for (f, _), hunk_turns in by_hunk.items():
        turns.setdefault(f, set()).update(hunk_turns)
    added_by_file: dict[str, list[str]] = {}
    for f, lines in added_lines.items():
        added_by_file[f] = [a for a in lines if significant(a)]
    for f in extra:
        turns.setdefault(f, set())
    scripts: ScriptRuns | None = None
    by_script: dict[str, tuple[int, ...]] = {}
    unattributed: list[str] = []
    for f, ts in turns.items():
        if not ts:
            # No content match: any turn whose edits name the file (a rename, a binary, an rm) accounts for it.
            ts.update(e.turn for e in index.get(norm_path(f).rsplit("/", 1)[-1], ()) if paths_match(e.path, f))
        if not ts:
            scripts = scripts or ScriptRuns(transcript, {k: "\n".join(v) for k, v in added_lines.items()})
            runners = scripts.attribute(f, added_by_file.get(f, []))
            if runners:
                ts.update(runners)
                by_script[f] = runners
        if not ts:
            unattributed.append(f)
    return {f: tuple(sorted(ts)) for f, ts in turns.items()}, by_script, tuple(unattributed)
