"""The typed diff model: files, hunks and lines of merge-base..head.

The file list comes from `git diff --raw` and `--numstat` (cheap: no patch
text), so a screen can show a 400-file branch at once. Each file's patch is
parsed with unidiff only when something asks for its hunks, either from one
up-front `git diff` (headless commands, `preload()`) or per file on demand
(the UI). Content is decoded as UTF-8; anything else is decoded with
replacement and the file is marked `non_utf8`.

Every git diff runs with `core.bigFileThreshold` at the analysis cap
(`max-analysis-bytes`): git itself then treats a larger file as binary, so
neither git nor unidiff ever holds its patch; `FileDiff.over_cap` tells
such a file from a real binary one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Callable, Iterator, Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from reviewui.core.bounded import analysis_limits, mib, over_budget, over_bytes
from reviewui.core.git import blob_sizes, run_git, run_git_async
from reviewui.core.roles import DEFAULT_TEST_GLOBS, Role, classify

Status = Literal["added", "deleted", "modified", "renamed"]
LineKind = Literal["context", "added", "removed"]

_DIFF_ARGS = ("--no-color", "--no-ext-diff", "--no-textconv", "-M", "--full-index")


def _diff_config() -> tuple[str, ...]:
    # git treats files over the threshold as binary: no patch text for them, in git or here
    return (f"core.bigFileThreshold={analysis_limits().bytes}",)


_GROUP = 200
"""Files per `git diff` when only some of them are asked for (keeps each argv short)."""

_STATUS: dict[str, Status] = {
    "A": "added", "D": "deleted", "M": "modified", "T": "modified", "R": "renamed", "C": "added",
}


@dataclass(frozen=True)
class DiffLine:
    """One line of a hunk."""

    kind: LineKind
    """`context`, `added` or `removed`."""
    text: str
    """The line's content without its end-of-line characters."""
    old_no: int | None
    """Line number on the base side (None for added lines)."""
    new_no: int | None
    """Line number on the branch side (None for removed lines)."""
    no_newline: bool = False
    """The file ends on this line without a newline."""


@dataclass(frozen=True)
class Hunk:
    """One hunk of one file's change."""

    file: str
    """Path of the file (branch side; base side for deletions)."""
    index: int
    """0-based position of the hunk within its file."""
    header: str
    """The range header, e.g. `@@ -4,6 +4,8 @@`."""
    section: str
    """The function/section context git prints after the header, if any."""
    old_start: int
    """First base-side line."""
    old_len: int
    """Number of base-side lines."""
    new_start: int
    """First branch-side line."""
    new_len: int
    """Number of branch-side lines."""
    lines: tuple[DiffLine, ...]
    """The hunk's lines in order."""
    text: str
    """The hunk as it appears in the diff, header line included."""

    @property
    def added(self) -> int:
        """Number of added lines."""
        return sum(1 for ln in self.lines if ln.kind == "added")

    @property
    def removed(self) -> int:
        """Number of removed lines."""
        return sum(1 for ln in self.lines if ln.kind == "removed")

    @property
    def key(self) -> tuple[str, int]:
        """(file, index): how the rest of reviewui names a hunk."""
        return (self.file, self.index)

    @property
    def new_lines(self) -> range:
        """The branch-side line numbers the hunk spans (a pure deletion spans the line at new_start)."""
        return range(self.new_start, self.new_start + max(self.new_len, 1))

    def contains(self, line: int | None) -> bool:
        """True when branch-side `line` (1-based; None or 0 is no line) falls inside the hunk."""
        return line is not None and line >= 1 and line in self.new_lines


@dataclass(frozen=True, eq=False)
class FileDiff:
    """One changed file, its hunks parsed on first use."""

    path: str
    """Branch-side path (base-side for deletions)."""
    old_path: str | None
    """Base-side path when renamed or copied, else None."""
    status: Status
    """`added`, `deleted`, `modified` or `renamed`."""
    role: Role
    """`test`, `source` or `other`."""
    binary: bool
    """True when git treats the content as binary."""
    added: int
    """Added line count (0 for binary)."""
    removed: int
    """Removed line count (0 for binary)."""
    old_mode: str | None
    """Base-side file mode (None when added)."""
    new_mode: str | None
    """Branch-side file mode (None when deleted)."""
    old_blob: str | None
    """Base-side blob SHA (None when added)."""
    new_blob: str | None
    """Branch-side blob SHA (None when deleted)."""
    _diff: "Diff" = field(repr=False, compare=False)

    @property
    def mode_changed(self) -> bool:
        """True when the file mode differs between base and branch."""
        return bool(self.old_mode and self.new_mode and self.old_mode != self.new_mode)

    @property
    def symlink(self) -> bool:
        """True when either side is a symlink (its "content" is the link's target, never followed)."""
        return "120000" in (self.old_mode, self.new_mode)

    @property
    def display_status(self) -> str:
        """Status with mode changes folded in (`modified` becomes `mode`)."""
        if self.status == "modified" and self.mode_changed and not (self.added or self.removed):
            return "mode"
        return self.status

    @cached_property
    def raw_patch(self) -> bytes:
        """This file's patch exactly as git printed it."""
        return self._diff.patch_bytes(self)

    @cached_property
    def non_utf8(self) -> bool:
        """True when the patch text is not valid UTF-8 (shown with replacement)."""
        try:
            self.raw_patch.decode("utf-8")
        except UnicodeDecodeError:
            return True
        return False

    @cached_property
    def hunks(self) -> tuple[Hunk, ...]:
        """The file's hunks, parsed on first access."""
        if self.binary or not self.raw_patch:
            return ()
        return parse_hunks(self.path, self.raw_patch.decode("utf-8", "replace"))

    @property
    def over_cap(self) -> bool:
        """True when its patch is never loaded: a side over the analysis cap (git shows it as binary),
        or past the diff's total budget (`Diff.not_shown` says which)."""
        return self.path in self._diff.over_cap_paths()

    def sizes(self) -> tuple[int | None, int | None]:
        """(base size, branch size) in bytes, for showing binary files."""
        return self._diff.blob_size(self.old_blob), self._diff.blob_size(self.new_blob)


class Diff:
    """Every changed file of base..head, hunks loaded lazily and thread-safely."""

    def __init__(self, repo_dir: str, base: str, head: str, files: list[FileDiff] | None = None) -> None:
        self.repo_dir = repo_dir
        self.base = base
        self.head = head
        self._files: tuple[FileDiff, ...] = tuple(files or ())
        self._pending_files: Callable[[], tuple[FileDiff, ...]] | None = None
        self._files_lock = threading.Lock()
        self._patches: dict[str, bytes] | None = None
        self._lock = threading.Lock()
        self._sizes: dict[str, int | None] = {}
        self._not_shown: dict[str, str] | None = None
        self._size_map: dict[str, int] | None = None

    @property
    def files(self) -> tuple[FileDiff, ...]:
        """Every changed file, in git's order (the first call may wait for git's line counts)."""
        if self._pending_files is not None:
            with self._files_lock:
                if self._pending_files is not None:
                    self._files = self._pending_files()
                    self._pending_files = None
        return self._files

    @property
    def added(self) -> int:
        """Total added lines."""
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        """Total removed lines."""
        return sum(f.removed for f in self.files)

    def __iter__(self) -> Iterator[FileDiff]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def file(self, path: str) -> FileDiff | None:
        """The changed file at `path` (branch side or old path), or None."""
        for f in self.files:
            if f.path == path or f.old_path == path:
                return f
        return None

    def hunks(self, roles: tuple[Role, ...] = ("source", "test", "other")) -> list[Hunk]:
        """All hunks of files with one of `roles`, in file order."""
        return [h for f in self.files if f.role in roles for h in f.hunks]

    def hunk(self, path: str, index: int) -> Hunk | None:
        """The hunk `index` of the file at `path`, or None."""
        f = self.file(path)
        if f is None or not 0 <= index < len(f.hunks):
            return None
        return f.hunks[index]

    def reclassify(self, test_globs: tuple[str, ...]) -> None:
        """Give every file the role `test_globs` say (a newly trusted config).

        Files keep their identity in the diff (same paths, hunks and indexes), so
        everything keyed by (path, hunk) stays valid.
        """
        new = tuple(f if classify(f.path, test_globs) == f.role else replace(f, role=classify(f.path, test_globs))
                    for f in self.files)
        with self._files_lock:
            self._files = new

    def subset(self, files: "list[FileDiff]") -> "Diff":
        """A Diff of only `files` (which keep loading their patches through this one)."""
        sub = Diff(self.repo_dir, self.base, self.head, files)
        sub._parent = self
        return sub

    _parent: "Diff | None" = None

    def preload(self) -> None:
        """Fetch every file's patch with a single git call (for headless use)."""
        if self._parent is not None:
            self._parent.preload()  # patches are split against the full file list
            return
        with self._lock:
            if self._patches is None:
                hidden = self.over_cap_paths()
                if not hidden:
                    out = run_git(self.repo_dir, "diff", *_DIFF_ARGS, self.base, self.head, config=_diff_config())
                    self._patches = _split_patches(out, self.files)
                    return
                # Only the shown files are asked for: git reads a whole blob to say "Binary files
                # differ", even past bigFileThreshold. In groups of consecutive files (git's order kept).
                shown = [f for f in self.files if f.path not in hidden]
                patches: dict[str, bytes] = {}
                for i in range(0, len(shown), _GROUP):
                    group = shown[i : i + _GROUP]
                    patches.update(_split_patches(self._patch_of(group), group))
                self._patches = patches

    def take(self, sizes: dict[str, int], patch: bytes | None) -> None:
        """Use blob sizes (of at least every blob of this diff) and, when no file is hidden (`not_shown`),
        the whole `git diff` of it, read by someone else (diff_batch.py): what preload would read."""
        if self._size_map is None:
            self._size_map = {b: sizes[b] for f in self.files for b in (f.old_blob, f.new_blob) if b and b in sizes}
            self._sizes.update(self._size_map)
        if patch is not None and not self.over_cap_paths():
            with self._lock:
                self._patches = _split_patches(patch, self.files)

    def patch_bytes(self, f: FileDiff) -> bytes:
        """The raw patch of one file: from the preloaded diff, else its own git call."""
        if self._parent is not None:
            return self._parent.patch_bytes(f)
        with self._lock:
            if self._patches is not None:
                return self._patches.get(f.path, b"")
        if f.over_cap:
            return b""
        return _split_patches(self._patch_of([f]), [f]).get(f.path, b"")

    def _patch_of(self, files: list[FileDiff]) -> bytes:
        """`git diff` of just `files` (both paths of a rename), their paths taken literally."""
        paths = [p for f in files for p in (f.old_path, f.path) if p]
        return run_git(self.repo_dir, "diff", *_DIFF_ARGS, self.base, self.head, "--", *paths,
                       env={"GIT_LITERAL_PATHSPECS": "1"}, config=_diff_config())

    def over_cap_paths(self) -> frozenset[str]:
        """Paths of the changed files whose patch is never loaded (see `not_shown`)."""
        return frozenset(self.not_shown())

    def not_shown(self) -> dict[str, str]:
        """Path -> why its patch is never loaded: a side over the analysis cap (git calls it binary),
        or past `max-diff-bytes` of changed content in all, in diff order (one `cat-file --batch-check`)."""
        if self._parent is not None:
            return self._parent.not_shown()
        if self._not_shown is None:
            limits = analysis_limits()
            sizes = self._all_sizes()
            out: dict[str, str] = {}
            spent = 0
            for f in self.files:
                big = max(sizes.get(f.old_blob or "", 0), sizes.get(f.new_blob or "", 0))
                if big > limits.bytes:
                    out[f.path] = over_bytes(big, limits.bytes) or "over the cap (max-analysis-bytes)"
                elif spent + big > limits.diff or (spent > limits.diff):
                    spent = limits.diff + 1  # the budget ends at the first file that does not fit
                    out[f.path] = f"past the {mib(limits.diff)} of changes shown in all (max-diff-bytes)"
                else:
                    spent += big
            self._not_shown = out
        return self._not_shown

    def budget_skipped(self) -> dict[str, str]:
        """Changed Python files left unparsed because the analysis budget is spent, with why
        (`bounded.over_budget` over the branch-side sizes, in diff order)."""
        if self._parent is not None:
            return self._parent.budget_skipped()
        sizes = self._all_sizes()
        return over_budget({f.path: sizes.get(f.new_blob or "", 0) for f in self.files
                            if f.status != "deleted" and f.path.endswith((".py", ".pyi"))})

    def _all_sizes(self) -> dict[str, int]:
        # computed twice by two threads at worst: the same answer
        if self._size_map is None:
            self._size_map = blob_sizes(self.repo_dir, [b for f in self.files for b in (f.old_blob, f.new_blob) if b])
            self._sizes.update(self._size_map)
        return self._size_map

    def blob_size(self, blob: str | None) -> int | None:
        """Size in bytes of a blob, or None for no blob."""
        if not blob or set(blob) == {"0"}:
            return None
        if blob not in self._sizes:
            out = run_git(self.repo_dir, "cat-file", "-s", blob, check=False).strip()
            self._sizes[blob] = int(out) if out.isdigit() else None
        return self._sizes[blob]


def load_diff(repo_dir: str, base: str, head: str, test_globs: tuple[str, ...] = DEFAULT_TEST_GLOBS) -> Diff:
    """List the files changed between `base` and `head`, without parsing patches.

    Raises ReviewError when git fails (e.g. an unknown revision).
    """
    diff = Diff(str(repo_dir), base, head)
    # The line counts make git compute every patch (most of the time here); they
    # are started first and joined only when the file list is first read, so a
    # caller (the UI starting up) gets on with its own work meanwhile.
    pending_counts = run_git_async(repo_dir, "diff", "--numstat", "-z", *_DIFF_ARGS, base, head,
                                   config=_diff_config())
    raw = run_git(repo_dir, "diff", "--raw", "-z", *_DIFF_ARGS, base, head, config=_diff_config())
    diff._pending_files = lambda: _files_of(diff, raw, pending_counts.result(), test_globs)
    return diff


def diff_of(repo_dir: str, base: str, head: str, raw: bytes, numstat: bytes,
            test_globs: tuple[str, ...] = DEFAULT_TEST_GLOBS) -> Diff:
    """The Diff load_diff would list from `--raw -z` and `--numstat -z` output already read
    (diff_batch.py reads many diffs' in one git call each); patches load as load_diff's do, unless
    `Diff.take` is handed them."""
    diff = Diff(str(repo_dir), base, head)
    diff._files = _files_of(diff, raw, numstat, test_globs)
    return diff


def _files_of(diff: Diff, raw: bytes, numstat: bytes, test_globs: tuple[str, ...]) -> tuple[FileDiff, ...]:
    """The FileDiffs of `--raw -z` output, with `--numstat -z`'s line counts and binary flags."""
    counts = _parse_numstat(numstat)
    files: list[FileDiff] = []
    for old_mode, new_mode, old_blob, new_blob, code, old_path, path in _parse_raw(raw):
        status: Status = _STATUS.get(code[0], "modified")
        added, removed, binary = counts.get(path, (0, 0, False))
        files.append(
            FileDiff(
                path=path,
                old_path=old_path if status == "renamed" else None,
                status=status,
                role=classify(path, test_globs),
                binary=binary,
                added=added,
                removed=removed,
                old_mode=None if status == "added" else old_mode,
                new_mode=None if status == "deleted" else new_mode,
                old_blob=None if status == "added" else old_blob,
                new_blob=None if status == "deleted" else new_blob,
                _diff=diff,
            )
        )
    return tuple(files)


def parse_hunks(path: str, patch_text: str) -> tuple[Hunk, ...]:
    """Parse one file's patch text into Hunks (unidiff does the parsing)."""
    try:
        patch = PatchSet(patch_text)
    except UnidiffParseError:
        return ()
    hunks: list[Hunk] = []
    for pf in patch:
        for i, h in enumerate(pf):
            lines: list[DiffLine] = []
            for ln in h:
                if ln.line_type == "\\":
                    if lines:
                        lines[-1] = DiffLine(lines[-1].kind, lines[-1].text, lines[-1].old_no, lines[-1].new_no, True)
                    continue
                kind: LineKind = (
                    "added" if ln.is_added else "removed" if ln.is_removed else "context"
                )
                lines.append(DiffLine(kind, ln.value.rstrip("\r\n"), ln.source_line_no, ln.target_line_no))
            header = f"@@ -{h.source_start},{h.source_length} +{h.target_start},{h.target_length} @@"
            hunks.append(
                Hunk(
                    file=path,
                    index=i,
                    header=header,
                    section=(h.section_header or "").strip(),
                    old_start=h.source_start,
                    old_len=h.source_length,
                    new_start=h.target_start,
                    new_len=h.target_length,
                    lines=tuple(lines),
                    text=str(h),
                )
            )
    return tuple(hunks)


def _decode_path(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def _parse_raw(raw: bytes) -> Iterator[tuple[str, str, str, str, str, str | None, str]]:
    """Yield (old_mode, new_mode, old_blob, new_blob, status, old_path, path) from `--raw -z`."""
    parts = raw.split(b"\0")
    i = 0
    while i < len(parts) and parts[i]:
        meta = parts[i].decode().lstrip(":").split()
        old_mode, new_mode, old_blob, new_blob, code = meta[:5]
        if code[0] in "RC":
            old_path, path = _decode_path(parts[i + 1]), _decode_path(parts[i + 2])
            i += 3
        else:
            old_path, path = None, _decode_path(parts[i + 1])
            i += 2
        yield old_mode, new_mode, old_blob, new_blob, code, old_path, path


def _parse_numstat(num: bytes) -> dict[str, tuple[int, int, bool]]:
    """Map path -> (added, removed, binary) from `--numstat -z`."""
    out: dict[str, tuple[int, int, bool]] = {}
    parts = num.split(b"\0")
    i = 0
    while i < len(parts) and parts[i]:
        fields = parts[i].split(b"\t", 2)  # a path may hold tabs
        a, r = fields[0], fields[1]
        if len(fields) >= 3 and fields[2]:
            path = _decode_path(fields[2])
            i += 1
        else:  # rename: the two paths follow as their own records
            path = _decode_path(parts[i + 2])
            i += 3
        binary = a == b"-"
        out[path] = (0 if binary else int(a), 0 if binary else int(r), binary)
    return out


def _split_patches(out: bytes, files: "list[FileDiff] | tuple[FileDiff, ...]") -> dict[str, bytes]:
    """Split a multi-file `git diff` into per-file chunks, matched to `files` in order.

    git prints files in the same order as `--raw`, and a `diff --git` line can
    only start a line in the header (content lines carry a +/-/space prefix).
    """
    chunks: list[bytes] = []
    start = 0 if out.startswith(b"diff --git ") else -1
    pos = 0
    while True:
        nxt = out.find(b"\ndiff --git ", pos)
        if nxt < 0:
            break
        if start >= 0:
            chunks.append(out[start : nxt + 1])
        start = nxt + 1
        pos = nxt + 1
    if start >= 0:
        chunks.append(out[start:])
    result: dict[str, bytes] = {}
    for f, chunk in zip(files, chunks, strict=False):
        result[f.path] = chunk
    return result
