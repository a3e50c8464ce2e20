"""How reviewui asks git for a diff, and reads its answer.

The arguments every `git diff` of a review passes (no colour, no external diff
or textconv, renames, full blob ids, `core.bigFileThreshold` at the analysis
cap so git itself treats a larger file as binary), and the readers of its
machine output: `--raw -z`, `--numstat -z`, and a multi-file patch split per
file. `diff.py` and `diff_batch.py` both ask git through these.
"""

from __future__ import annotations

from typing import Iterator, Protocol, Sequence

from reviewui.core.bounded import analysis_limits

DIFF_ARGS = ("--no-color", "--no-ext-diff", "--no-textconv", "-M", "--full-index")
"""The options of every `git diff` reviewui reads."""


def diff_config() -> tuple[str, ...]:
    """The `-c` settings of every `git diff`: `core.bigFileThreshold` at the analysis cap."""
    # git treats files over the threshold as binary: no patch text for them, in git or here
    return (f"core.bigFileThreshold={analysis_limits().bytes}",)


class HasPath(Protocol):
    """Anything named by a branch-side path (a FileDiff fits)."""

    @property
    def path(self) -> str:
        """The branch-side path."""
        ...


def _decode_path(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def parse_raw(raw: bytes) -> Iterator[tuple[str, str, str, str, str, str | None, str]]:
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


def parse_numstat(num: bytes) -> dict[str, tuple[int, int, bool]]:
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


def split_patches(out: bytes, files: Sequence[HasPath]) -> dict[str, bytes]:
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
