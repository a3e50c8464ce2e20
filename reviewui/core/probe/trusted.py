"""The probe's trusted test configuration: the base commit's conftest files and pytest settings.

A conftest or plugin on the branch decides what pytest reports (a hook can
turn every failure into a pass), so the probe's branch and reverted runs use
the base's conftest.py files and pytest configuration files instead; when
the branch changed any of them, the probe also runs once with the branch's
own, and both outcomes are shown. Only the base's bytes are written: files
the base does not have are removed.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from reviewui.core.git import run_git, show_file
from reviewui.core.run.scratch_build import commit_scratch
from reviewui.core.run.scratch import Scratch

CONFIG_FILES = ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")
"""Root files pytest reads its configuration (addopts, `-p` plugins) from."""


def _is_test_config(path: str) -> bool:
    return PurePosixPath(path).name == "conftest.py" or path in CONFIG_FILES


def _config_blobs(repo: Path, rev: str) -> dict[str, str]:
    """Path -> blob id of every conftest.py and root pytest configuration file at `rev`."""
    out = run_git(repo, "ls-tree", "-r", "-z", "--full-tree", rev)
    blobs: dict[str, str] = {}
    for entry in out.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        path = name.decode("utf-8", "replace")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob" and _is_test_config(path):
            blobs[path] = parts[2].decode("ascii", "replace")
    return blobs


def changed_test_config(repo: Path, base: str, head: str) -> tuple[str, ...]:
    """The conftest.py and pytest configuration files whose content differs between base and head."""
    old, new = _config_blobs(repo, base), _config_blobs(repo, head)
    return tuple(sorted(p for p in set(old) | set(new) if old.get(p) != new.get(p)))


def use_base_config(scratch: Scratch, repo: Path, base: str, paths: tuple[str, ...]) -> None:
    """Put the base's version of each of `paths` into the scratch (removing those the base lacks),
    committed as a revert is."""
    for rel in paths:
        target = scratch.path / rel
        content = show_file(repo, base, rel)
        scratch.note_written(rel)  # the next checkout of the head puts it back
        if content is None:
            if target.is_file() or target.is_symlink():
                target.unlink()
        else:
            if target.is_symlink():  # a link the branch made: replaced, never followed
                target.unlink()
            scratch.add_file(rel, content)
    commit_scratch(scratch.path, *paths)
