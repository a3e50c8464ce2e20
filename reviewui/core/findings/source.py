"""The branch's files as text and syntax trees, read out of git in one batch.

Rules that look across the whole repository (who calls this function? is
there already a function like it?) need every Python file at the head
commit. Fetching them one `git cat-file` at a time costs a process per file,
so `TreeSource` asks `git cat-file --batch` once and keeps the results.
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath
from typing import Iterable

from reviewui.core.roles import matches_any
from reviewui.core.bounded import NotAnalysed, analysis_limits, over_bytes, parse_python, parse_python_or_none
from reviewui.core.git import Blob, list_files, read_blobs as git_read_blobs, show_file


def read_blobs(repo_dir: str, rev: str, paths: Iterable[str]) -> dict[str, bytes | None]:
    """Return path -> content at `rev` for each path (None when absent or over the analysis cap), in one git call."""
    return {p: (None if blob is None or blob.cut else blob.data) for p, blob in read_sized(repo_dir, rev, paths).items()}


def read_sized(repo_dir: str, rev: str, paths: Iterable[str]) -> dict[str, Blob | None]:
    """Return path -> Blob at `rev` (cut past the analysis cap; None when absent), in one git call."""
    specs = {f"{rev}:{p}": p for p in dict.fromkeys(paths)}
    return {specs[spec]: blob for spec, blob in git_read_blobs(repo_dir, list(specs))}


def decode(data: bytes) -> str:
    """Decode file content as UTF-8, replacing what is not."""
    return data.decode("utf-8", "replace")


def parse(text: str, path: str = "<unknown>") -> ast.Module | None:
    """Return the syntax tree of `text`, or None when it does not parse or is over the analysis caps."""
    return parse_python_or_none(text, path)


def file_text(repo_dir: str, rev: str, path: str) -> str | None:
    """Return one file's text at `rev` (None when absent there or over the analysis cap)."""
    data = show_file(repo_dir, rev, path)
    return None if data is None or len(data) > analysis_limits().bytes else decode(data)


class TreeSource:
    """Every file of one commit, fetched lazily in batches and parsed at most once."""

    def __init__(self, repo_dir: str, rev: str, exclude: Iterable[str] = (), skip: dict[str, str] | None = None) -> None:
        self.repo_dir = str(repo_dir)
        self.rev = rev
        self.exclude = tuple(exclude)
        self._skip = dict(skip or {})  # path -> why it is never parsed (the analysis budget is spent)
        self._paths: list[str] | None = None
        self._blobs: dict[str, bytes | None] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self.skipped: dict[str, str] = {}
        """Path -> why it was not analysed (over the byte cap, nested too deeply), for files read so far."""

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
            for p, blob in read_sized(self.repo_dir, self.rev, missing).items():
                if blob is not None and blob.cut:
                    self.skipped[p] = over_bytes(blob.size) or "over the cap (max-analysis-bytes)"
                self._blobs[p] = None if blob is None or blob.cut else blob.data
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
        if path not in self._trees and path in self._skip:
            self.skipped[path] = self._skip[path]
            self._trees[path] = None
        if path not in self._trees:
            text = self.text(path)
            try:
                self._trees[path] = None if text is None else parse_python(text, path)
            except NotAnalysed as e:
                self.skipped[path] = e.reason
                self._trees[path] = None
            except (SyntaxError, ValueError):
                self._trees[path] = None
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
