"""The files of the head commit a sweep reads, each from git once."""

from __future__ import annotations

import threading

from reviewui.core.bounded import analysis_limits
from reviewui.core.git import show_file
from reviewui.core.target import Target


class HeadFiles:
    """Files of the head commit, each read from git once per sweep (selection, coverage and
    guards all read the changed files; a git process each time cost ~3 ms a read)."""

    def __init__(self, target: Target) -> None:
        self._target = target
        self._lock = threading.Lock()
        self._seen: dict[str, bytes | None] = {}

    def raw(self, path: str) -> bytes | None:
        """The file's bytes at head, or None when it is absent there or over the analysis cap."""
        with self._lock:
            if path not in self._seen:
                data = show_file(self._target.repo_dir, self._target.head, path)
                self._seen[path] = None if data is None or len(data) > analysis_limits().bytes else data
            return self._seen[path]

    def text(self, path: str) -> str | None:
        """The file's text at head (undecodable bytes replaced), or None when it is absent."""
        raw = self.raw(path)
        return None if raw is None else raw.decode("utf-8", "replace")
