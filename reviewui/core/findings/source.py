"""The branch's files as text and syntax trees, read out of git in one batch.

Rules that look across the whole repository (who calls this function? is
there already a function like it?) need every Python file at the head
commit. Fetching them one `git cat-file` at a time costs a process per file,
so `TreeSource` asks `git cat-file --batch` once and keeps the results.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import PurePosixPath
from typing import Iterable

from reviewui.core.roles import matches_any
from reviewui.core.git import list_files, run_git, show_file

MAX_PARSE_BYTES = 2_000_000
"""Files larger than this are not parsed (generated code, vendored bundles)."""


def read_blobs(repo_dir: str, rev: str, paths: Iterable[str]) -> dict[str, bytes | None]:
    """Return path -> content at `rev` for each path (None when absent), with one git call."""
    wanted = [p for p in dict.fromkeys(paths) if "\n" not in p and "\r" not in p]
    out: dict[str, bytes | None] = {}
    if not wanted:
        return out
    request = "".join(f"{rev}:{p}\n" for p in wanted).encode("utf-8", "surrogateescape")
    raw = run_git(repo_dir, "cat-file", "--batch", input=request)
    pos = 0
    for path in wanted:
        nl = raw.find(b"\n", pos)
        if nl < 0:
            break
        header = raw[pos:nl]
        pos = nl + 1
        parts = header.split()
        if len(parts) == 3 and parts[1] == b"blob" and parts[2].isdigit():
            size = int(parts[2])
            out[path] = raw[pos : pos + size]
            pos += size + 1
        elif len(parts) == 3 and parts[2].isdigit():  # a tree or submodule: skip its body
            pos += int(parts[2]) + 1
            out[path] = None
        else:
            out[path] = None
    return out


def decode(data: bytes) -> str:
    """Decode file content as UTF-8, replacing what is not."""
    return data.decode("utf-8", "replace")


def parse(text: str, path: str = "<unknown>") -> ast.Module | None:
    """Return the syntax tree of `text`, or None when it does not parse."""
    if len(text) > MAX_PARSE_BYTES:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes in old code
            return ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def file_text(repo_dir: str, rev: str, path: str) -> str | None:
    """Return one file's text at `rev` (None when absent there)."""
    data = show_file(repo_dir, rev, path)
    return None if data is None else decode(data)


class TreeSource:
    """Every file of one commit, fetched lazily in batches and parsed at most once."""

    def __init__(self, repo_dir: str, rev: str, exclude: Iterable[str] = ()) -> None:
        self.repo_dir = str(repo_dir)
        self.rev = rev
        self.exclude = tuple(exclude)
        self._paths: list[str] | None = None
        self._blobs: dict[str, bytes | None] = {}
        self._trees: dict[str, ast.Module | None] = {}

    @property
    def paths(self) -> list[str]:
        """Every file path in the commit."""
        if self._paths is None:
            paths = list_files(self.repo_dir, self.rev)
            if self.exclude:
                paths = [p for p in paths if not matches_any(p, self.exclude)]
            self._paths = paths
        return self._paths

    def python_paths(self) -> list[str]:
        """Paths of the commit's Python files."""
        return [p for p in self.paths if p.endswith((".py", ".pyi"))]

    def load(self, paths: Iterable[str]) -> None:
        """Fetch the given paths in one git call (already fetched ones are skipped)."""
        missing = [p for p in paths if p not in self._blobs]
        if missing:
            self._blobs.update(read_blobs(self.repo_dir, self.rev, missing))
            for p in missing:
                self._blobs.setdefault(p, None)

    def data(self, path: str) -> bytes | None:
        """Return the bytes of `path` (None when absent)."""
        self.load([path])
        return self._blobs.get(path)

    def text(self, path: str) -> str | None:
        """Return the text of `path` (None when absent or binary)."""
        data = self.data(path)
        if data is None or b"\0" in data[:8000]:
            return None
        return decode(data)

    def tree(self, path: str) -> ast.Module | None:
        """Return the parsed syntax tree of `path` (None when absent or unparsable)."""
        if path not in self._trees:
            text = self.text(path)
            self._trees[path] = None if text is None else parse(text, path)
        return self._trees[path]

    def trees(self) -> dict[str, ast.Module]:
        """Return every Python file that parses, by path."""
        paths = self.python_paths()
        self.load(paths)
        out: dict[str, ast.Module] = {}
        for p in paths:
            t = self.tree(p)
            if t is not None:
                out[p] = t
        return out


def basename(path: str) -> str:
    """Return the last component of a repository path."""
    return PurePosixPath(path).name
