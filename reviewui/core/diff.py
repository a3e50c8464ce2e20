"""The diff of merge-base..head: every changed file, its patch loaded lazily.

The file list comes from `git diff --raw` and `--numstat` (cheap: no patch
text), so a screen can show a 400-file branch at once. Each file's patch is
parsed only when something asks for its hunks, either from one up-front
`git diff` (headless commands, `preload()`) or per file on demand (the UI).
Content is decoded as UTF-8; anything else is decoded with replacement and
the file is marked `non_utf8`.

Every git diff runs with `core.bigFileThreshold` at the analysis cap
(`max-analysis-bytes`, `diff_git.diff_config`): git itself then treats a
larger file as binary, so neither git nor unidiff ever holds its patch;
`FileDiff.over_cap` tells such a file from a real binary one.

The records live below this module: a file in `file_diff.py` (it loads its
patch through its `Diff`, seen there as a `PatchSource`), a hunk and its
lines in `hunks.py`; reading git's output is `diff_git.py`.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any, Callable, Iterator

from reviewui.core.bounded import analysis_limits, mib, over_budget, over_bytes
from reviewui.core.diff_git import DIFF_ARGS, diff_config, parse_numstat, parse_raw, split_patches
from reviewui.core.file_diff import FileDiff, Status
from reviewui.core.git import blob_sizes, run_git, run_git_async
from reviewui.core.hunks import Hunk
from reviewui.core.roles import DEFAULT_TEST_GLOBS, ROLE_ORDER, Role, classify

_GROUP = 200
"""Files per `git diff` when only some of them are asked for (keeps each argv short)."""

_STATUS: dict[str, Status] = {
    "A": "added", "D": "deleted", "M": "modified", "T": "modified", "R": "renamed", "C": "added",
}


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

    def __getstate__(self) -> dict[str, Any]:
        """What crosses a process boundary (`reviewui open` lists the diff in a helper, `work_ahead.py`):
        the file list joined first, the locks left behind."""
        _ = self.files
        state = self.__dict__.copy()
        del state["_files_lock"], state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._files_lock = threading.Lock()
        self._lock = threading.Lock()

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

    def first_listed(self) -> FileDiff | None:
        """The file a review shows first: the first, in git's order, of the first role in ROLE_ORDER that has any."""
        return next((f for role in ROLE_ORDER for f in self.files if f.role == role), None)

    def hunks(self, roles: tuple[Role, ...] = ROLE_ORDER) -> list[Hunk]:
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
                    out = run_git(self.repo_dir, "diff", *DIFF_ARGS, self.base, self.head, config=diff_config())
                    self._patches = split_patches(out, self.files)
                    return
                # Only the shown files are asked for: git reads a whole blob to say "Binary files
                # differ", even past bigFileThreshold. In groups of consecutive files (git's order kept).
                shown = [f for f in self.files if f.path not in hidden]
                patches: dict[str, bytes] = {}
                for i in range(0, len(shown), _GROUP):
                    group = shown[i : i + _GROUP]
                    patches.update(split_patches(self._patch_of(group), group))
                self._patches = patches

    def take(self, sizes: dict[str, int], patch: bytes | None) -> None:
        """Use blob sizes (of at least every blob of this diff) and, when no file is hidden (`not_shown`),
        the whole `git diff` of it, read by someone else (diff_batch.py): what preload would read."""
        if self._size_map is None:
            self._size_map = {b: sizes[b] for f in self.files for b in (f.old_blob, f.new_blob) if b and b in sizes}
            self._sizes.update(self._size_map)
        if patch is not None and not self.over_cap_paths():
            with self._lock:
                self._patches = split_patches(patch, self.files)

    def patch_bytes(self, f: FileDiff) -> bytes:
        """The raw patch of one file: from the preloaded diff, else its own git call."""
        if self._parent is not None:
            return self._parent.patch_bytes(f)
        with self._lock:
            if self._patches is not None:
                return self._patches.get(f.path, b"")
        if f.over_cap:
            return b""
        return split_patches(self._patch_of([f]), [f]).get(f.path, b"")

    def _patch_of(self, files: list[FileDiff]) -> bytes:
        """`git diff` of just `files` (both paths of a rename), their paths taken literally."""
        paths = [p for f in files for p in (f.old_path, f.path) if p]
        return run_git(self.repo_dir, "diff", *DIFF_ARGS, self.base, self.head, "--", *paths,
                       env={"GIT_LITERAL_PATHSPECS": "1"}, config=diff_config())

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
    pending_counts = run_git_async(repo_dir, "diff", "--numstat", "-z", *DIFF_ARGS, base, head,
                                   config=diff_config())
    raw = run_git(repo_dir, "diff", "--raw", "-z", *DIFF_ARGS, base, head, config=diff_config())
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
    counts = parse_numstat(numstat)
    files: list[FileDiff] = []
    for old_mode, new_mode, old_blob, new_blob, code, old_path, path in parse_raw(raw):
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
