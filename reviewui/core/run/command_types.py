"""The one typed line between programs reviewui may ask on the host and words an agent wrote.

- `HostProgram` (a `NewType` of `str`): a program the reviewer named (the CLI, the user config) or
  the base commit's trusted config named, as a bare name found on the reviewer's own PATH or an
  absolute path, whose file lies outside every checkout reviewui hides from runs (the reviewed
  repository, its git dir, the scratch trees) and every temp dir of reviewui's. A program
  inside a checkout counts only in a venv there (the reviewer's activated `.venv`). Only
  `host_program` makes one (a hygiene test keeps it so), and every helper that starts,
  reads or resolves a program on the host (the interpreter's layout, `python_of`, the
  coverage probe, `checkout_roots`, a warm server's Python) takes only this type:
  `mypy --strict` rejects a plain `str`.
- `AgentWords`: words an agent wrote (a transcript's test command, anything from the branch or
  a note). Only the sandboxed runner takes them (`runner.run_tests(..., agent_args=...)`), as
  arguments after a trusted program; nothing on the host resolves, reads or runs them.

A relative path with a slash (`tools/python`, `.venv/bin/python`) is never resolved on the host:
it names a file of the tree under test, which only a sandboxed run may start.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import NewType, Sequence

from reviewui.core.config import user_cache_dir
from reviewui.core.run.tempdirs import temp_roots

HostProgram = NewType("HostProgram", str)
"""A trusted program, vetted by `host_program`: a bare name (looked up on the reviewer's PATH) or
an absolute path, resolved outside every checkout and scratch. The only kind host helpers take."""


@dataclass(frozen=True)
class AgentWords:
    """Words an agent wrote: never a program on the host; only the sandboxed runner takes them."""

    words: tuple[str, ...] = ()
    """The words, in order, as the agent wrote them (after reviewui chose which to keep)."""


_lock = threading.Lock()
_checkouts: set[Path] = set()


def add_checkouts(*paths: str | Path) -> None:
    """Register directories whose files are the agent's (a reviewed repository, its git dir, a
    scratch root): no host program resolves into them (outside a venv there)."""
    with _lock:
        for p in paths:
            try:
                _checkouts.add(Path(p).resolve())
            except OSError:
                continue


_OWN_TEMP = re.compile(r"^reviewui-(?:scratch-u\d+|[a-z][a-z-]*?-\d+-.*)$")
"""reviewui's temp dirs (tempdirs.private_tempdir's, the scratch slots' `reviewui-scratch-u<uid>`)."""


def _in_scratch(path: Path) -> bool:
    """True when `path` is in reviewui's cache (pristine trees) or one of its temp dirs (slots, io dirs)."""
    cache = user_cache_dir()
    if path == cache or cache in path.parents:
        return True
    for tmp in {r for root in temp_roots() for r in (root, root.resolve())}:
        if tmp in path.parents and _OWN_TEMP.match(path.relative_to(tmp).parts[0]):
            return True
    return False


def _under(path: Path, roots: Sequence[Path]) -> Path | None:
    return next((r for r in roots if path == r or r in path.parents), None)


def _in_venv(path: Path, stop: Path) -> bool:
    """True when `path` lies in a venv (a dir with a pyvenv.cfg) below `stop`."""
    return any((p / "pyvenv.cfg").is_file() for p in path.parents if p != stop and stop in p.parents)


def outside_checkouts(path: str | Path) -> bool:
    """True when host `path` (as given and resolved) is outside every scratch and temp dir of
    reviewui's, and outside every registered checkout unless in a venv there."""
    try:
        forms = {Path(path).absolute(), Path(path).resolve()}
    except OSError:
        return False
    with _lock:
        checkouts = list(_checkouts)
    for form in forms:
        if _in_scratch(form):
            return False
        root = _under(form, checkouts)
        if root is not None and not _in_venv(form, root):
            return False
    return True


def host_program(name: str | None, path_env: str | None = None) -> HostProgram | None:
    """`name` (from the reviewer's or the base's trusted settings) as a HostProgram, or None: a
    relative path with a slash, a bare name not on `path_env` (default the reviewer's PATH), or a
    program that resolves into a checkout or a scratch."""
    if not name:
        return None
    if "/" in name and not os.path.isabs(name):
        return None  # a file of the tree under test: only the sandbox starts it
    path = os.environ.get("PATH", os.defpath) if path_env is None else path_env
    found = shutil.which(name, path=path)
    if found is None or not os.path.isabs(found) or not outside_checkouts(found):
        return None
    return HostProgram(name)


def resolve(program: HostProgram, path_env: str | None = None) -> str | None:
    """The absolute file `program` names on `path_env` (default the reviewer's PATH), or None when
    it is not there or lies in a checkout or a scratch (a PATH other than the one it was vetted on)."""
    path = os.environ.get("PATH", os.defpath) if path_env is None else path_env
    found = shutil.which(program, path=path)
    if found is None or not os.path.isabs(found) or not outside_checkouts(found):
        return None
    return found
