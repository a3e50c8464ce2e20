"""Many diffs read in a handful of git processes, each as `load_diff` followed by `preload` would have it.

The queue shows the since-verdict delta (core/delta) of every reworked branch;
each is three diffs, and read one by one that is a dozen git processes a
branch. Here every (base, head) pair of a batch goes through one `git diff-tree
--stdin` for the file lists (`--raw -z`), one for the line counts (`--numstat
-z`), one `cat-file --batch-check` for every blob's size (what the analysis
caps hide, `Diff.not_shown`), and one `diff-tree --stdin -p` for the patches
of the diffs that hide no file. A diff that hides some loads its patches as
load_diff's does (only the shown files, git's own calls). The patch stream is
read as the diffs are handed out, so one diff's patch at a time is held (each
within `max-diff-bytes`), besides the batch's file lists.

`git diff` (what load_diff runs) reads some of the reviewer's `diff.*`
settings that plumbing ignores: `diff.context`, `diff.interHunkContext`,
`diff.algorithm` and `diff.noprefix` are handed to diff-tree as the options
they stand for. With any other setting of that kind (`diff.orderFile`,
`diff.relative`, `diff.submodule`, one this module does not know) the diffs
cannot be read here as load_diff reads them: `porcelain_options` says None and
the caller reads them one by one.
"""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path
from typing import IO, Callable, Iterator, Sequence

from reviewui.core.diff import Diff, diff_of
from reviewui.core.diff_git import DIFF_ARGS, diff_config
from reviewui.core.errors import ReviewError
from reviewui.core.git import blob_sizes, git_env, run_git
from reviewui.core.roles import DEFAULT_TEST_GLOBS

Pair = tuple[str, str]
"""(base, head) of one diff: two full commit ids."""

_SAME = frozenset({
    "diff.renames", "diff.renamelimit", "diff.external", "diff.color", "diff.colormoved", "diff.colormovedws",
    "diff.wserrorhighlight", "diff.wordregex", "diff.statgraphwidth", "diff.statnamewidth", "diff.dirstat",
    "diff.autorefreshindex", "diff.suppressblankempty", "diff.indentheuristic", "diff.compactionheuristic",
    "diff.tool", "diff.guitool", "diff.trustexitcode", "diff.mnemonicprefix",
})
"""`diff.*` settings that change nothing here: read by plumbing too (renamelimit, suppressBlankEmpty,
indentHeuristic), overridden by load_diff's own options (renames by -M, external by --no-ext-diff,
colours by --no-color), about other output (stat, dirstat, word diff), or about other commands
(difftool; mnemonic prefixes name the index and work tree, never two commits)."""
_ALGORITHMS = frozenset({"default", "myers", "minimal", "patience", "histogram"})
_STREAM = ("diff-tree", "--stdin", "-r", "--always", *DIFF_ARGS)
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def porcelain_options(repo_dir: str | Path) -> tuple[str, ...] | None:
    """The diff-tree options that make its patches what `git diff` prints under the reviewer's settings
    in `repo_dir`; None when a setting has no such option here (see the module docstring)."""
    out = run_git(repo_dir, "config", "-z", "--get-regexp", r"^diff\.[^.]*$", check=False)
    settings: dict[str, str | None] = {}
    for record in out.split(b"\0"):
        if record:
            key, nl, text = record.decode("utf-8", "replace").partition("\n")
            settings[key.lower()] = text if nl else None  # the last one counts, as git's; None: a bare key
    options: list[str] = []
    for key, value in settings.items():
        if key in _SAME:
            continue
        if key in ("diff.context", "diff.interhunkcontext") and value is not None and value.isdigit():
            options.append(f"-U{int(value)}" if key == "diff.context" else f"--inter-hunk-context={int(value)}")
        elif key == "diff.algorithm" and value is not None and value.lower() in _ALGORITHMS:
            options.append(f"--diff-algorithm={value.lower()}")
        elif key == "diff.noprefix" and _bool(value) is not None:
            options.extend(["--no-prefix"] if _bool(value) else [])
        else:
            return None
    return tuple(options)


def _bool(value: str | None) -> bool | None:
    """A git boolean as `git config --type=bool` reads it (None: not one it is sure of)."""
    if value is None:
        return True
    low = value.lower()
    return True if low in ("true", "yes", "on", "1") else False if low in ("false", "no", "off", "0", "") else None


def load_diffs(repo_dir: str | Path, pairs: Sequence[Pair], options: Sequence[str],
               test_globs: tuple[str, ...] = DEFAULT_TEST_GLOBS) -> Iterator[Diff]:
    """The Diff of each (base, head) of `pairs` (full commit ids), in order, as load_diff and preload give
    it; `options` from porcelain_options. Raises ReviewError when git fails or its output is not what was
    asked (a caller then reads the rest one by one)."""
    repo = str(repo_dir)
    if not pairs:
        return
    if any(not (_SHA.match(b) and _SHA.match(h)) for b, h in pairs):
        raise ReviewError("diff batch: a pair that is not two commit ids")
    asks = "".join(f"{h} {b}\n" for b, h in pairs).encode()
    heads = [h for _, h in pairs]
    config = diff_config()
    # -U and --inter-hunk-context would add patches to these; the algorithm changes line counts
    counted = [o for o in options if o.startswith("--diff-algorithm=")]
    raws = _records(run_git(repo, *_STREAM, "--raw", "-z", input=asks, config=config), heads, _raw_end)
    counts = _records(run_git(repo, *_STREAM, *counted, "--numstat", "-z", input=asks, config=config), heads,
                      _numstat_end)
    diffs = [diff_of(repo, b, h, raw, num, test_globs) for (b, h), raw, num in zip(pairs, raws, counts, strict=True)]
    sizes = blob_sizes(repo, [x for d in diffs for f in d.files for x in (f.old_blob, f.new_blob) if x])
    for d in diffs:
        d.take(sizes, None)
    whole = [not d.over_cap_paths() for d in diffs]
    stream = _PatchStream(repo, [p for p, w in zip(pairs, whole, strict=True) if w], options, config)
    try:
        for d, w in zip(diffs, whole, strict=True):
            if w:
                d.take(sizes, stream.next_patch())
            yield d
        stream.finish()
    finally:
        stream.close()


def _raw_end(fields: list[bytes], i: int) -> int:
    """Where the `--raw -z` record at fields[i] ends, or -1 when fields[i] starts none."""
    if not fields[i].startswith(b":"):
        return -1
    meta = fields[i].split()
    return i + (3 if len(meta) >= 5 and meta[4][:1] in (b"R", b"C") else 2)


def _numstat_end(fields: list[bytes], i: int) -> int:
    """Where the `--numstat -z` record at fields[i] ends, or -1 when fields[i] starts none."""
    parts = fields[i].split(b"\t", 2)  # a path may hold tabs
    if len(parts) != 3:
        return -1
    return i + 1 if parts[2] else i + 3  # a rename's two paths follow as fields of their own


def _records(out: bytes, heads: list[str], end: Callable[[list[bytes], int], int]) -> list[bytes]:
    """`--stdin -z` output cut into each asked pair's own part, as `git diff -z` prints it alone."""
    fields = out.split(b"\0")
    parts: list[bytes] = []
    i = 0
    for head in heads:
        if i >= len(fields) or fields[i] != head.encode():
            raise ReviewError("diff batch: diff-tree's output is out of step with what was asked")
        start = i = i + 1
        while i < len(fields) and (nxt := end(fields, i)) >= 0:  # a path is always taken as one
            i = nxt
        parts.append(b"".join(f + b"\0" for f in fields[start:i]))
    if any(fields[i:]):
        raise ReviewError("diff batch: diff-tree said more than was asked")
    return parts


class _PatchStream:
    """One `git diff-tree --stdin -p` over many pairs, each pair's patch read when asked for."""

    def __init__(self, repo: str, pairs: list[Pair], options: Sequence[str], config: Sequence[str]) -> None:
        self.heads = [h.encode() + b"\n" for _, h in pairs]
        self.at = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.feeder: threading.Thread | None = None
        self.line = b""
        if not pairs:
            return
        argv = ["git", *(x for c in ("core.quotepath=false", *config) for x in ("-c", c)), *_STREAM, *options, "-p"]
        try:
            self.proc = subprocess.Popen(argv, cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, env=git_env())
        except FileNotFoundError as e:
            raise ReviewError("git is not installed or not on PATH") from e
        assert self.proc.stdin is not None
        data = "".join(f"{h} {b}\n" for b, h in pairs).encode()
        self.feeder = threading.Thread(target=_feed, args=(self.proc.stdin, data), daemon=True)
        self.feeder.start()  # git stops reading while its answers fill the pipe
        self.line = self._readline()

    def _readline(self) -> bytes:
        assert self.proc is not None and self.proc.stdout is not None
        return self.proc.stdout.readline()

    def next_patch(self) -> bytes:
        """The next pair's patch, all of it (a line equal to the next pair's header cannot be patch text:
        every patch line starts with a mark or a word)."""
        if self.proc is None or self.at >= len(self.heads) or self.line != self.heads[self.at]:
            raise ReviewError("diff batch: diff-tree's patches are out of step with what was asked")
        self.at += 1
        following = self.heads[self.at] if self.at < len(self.heads) else None
        lines: list[bytes] = []
        line = self._readline()
        while line and line != following:
            lines.append(line)
            line = self._readline()
        self.line = line
        return b"".join(lines)

    def finish(self) -> None:
        """Check git said all it was asked and nothing more, and exited well."""
        if self.proc is None:
            return
        code = self.proc.wait()
        if self.line or self.at != len(self.heads) or code != 0:
            raise ReviewError(f"diff batch: diff-tree stopped early (exit {code})")

    def close(self) -> None:
        """Stop git if it still runs (a consumer that stopped early) and reap it."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        if self.feeder is not None:
            self.feeder.join()


def _feed(pipe: IO[bytes], data: bytes) -> None:
    try:
        pipe.write(data)
        pipe.close()
    except (BrokenPipeError, OSError, ValueError):  # git was stopped before it read every pair
        pass
