"""The Python the sample projects' tests run with: a venv holding what a project's own dev venv holds.

The default test command is `python -m pytest` found on PATH. The suite's own venv is a poor
stand-in for a project's: it has reviewui's dependencies and this suite's plugins, and pytest
loads every plugin it finds (Hypothesis, Textual's snapshots and syrupy cost ~0.45 s of the
~0.9 s a sandboxed pytest start takes here, and a sweep starts several). So the samples run with
a venv holding copies of pytest, pytest-cov and pytest-xdist with what they require, taken file
by file from the suite's own venv (no network, the same versions). Not pytest-asyncio, though many
projects have it: no sample's test is async, and importing it was 15 % of each sandboxed pytest
start and 9 % of each warm run's CPU here (asyncio, ssl and the plugin itself), paid hundreds of
times a suite. A project's other installed plugins still meet the warm server in the tests that use
the suite's own interpreter (`sys.executable`: pytest-asyncio, syrupy, Hypothesis). It is made
once per user, interpreter and those versions under the temporary directory and reused by later
runs (and by every xdist worker). tests/conftest.py puts its `bin` first on PATH; a test naming
the interpreter uses `pytest_command()` (or `python()`). Tests that need the suite's whole interpreter
name `sys.executable`.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import shutil
import stat
import sys
import tempfile
import venv
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

PLUGINS = ("pytest", "pytest-cov", "pytest-xdist")
"""What a project's dev venv holds here (with their requirements)."""


def _closure(names: tuple[str, ...]) -> list[metadata.Distribution]:
    """The distributions `names` need, themselves included (extras not followed)."""
    seen: dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a requirement of another Python version
        seen[key] = dist
        for line in dist.requires or ():
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return list(seen.values())


def _site_packages(root: Path) -> Path:
    return root / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def _build(root: Path, dists: list[metadata.Distribution]) -> None:
    venv.EnvBuilder(with_pip=False, symlinks=True, clear=True).create(root)
    target = _site_packages(root)
    for dist in dists:
        for rel in dist.files or ():
            if ".." in rel.parts:
                continue  # console scripts, outside site-packages
            src = Path(str(dist.locate_file(rel)))
            if src.is_file():
                dest = target / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                # copy2 keeps the times the bytecode was checked against: a sandboxed run sees
                # the venv read-only, and without valid .pyc files each start compiles pytest.
                shutil.copy2(src, dest)


def _key(dists: list[metadata.Distribution]) -> str:
    names = sorted(f"{d.metadata['Name']}=={d.version}" for d in dists)
    raw = "\n".join([os.path.realpath(sys.executable), sys.version, *names])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _own_dir(path: Path) -> Path:
    """`path`, made private to this user (refused when another user made it first)."""
    path.mkdir(mode=0o700, exist_ok=True)
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise RuntimeError(f"{path} is not this user's private directory")
    return path


@functools.cache
def python(extra: tuple[str, ...] = ()) -> str:
    """The samples' Python (made by the first caller on this machine for these versions), with the
    distributions named in `extra` too (a bench's mutmut, say)."""
    dists = _closure(PLUGINS + extra)
    home = _own_dir(Path(tempfile.gettempdir()) / f"reviewui-tests-{os.getuid()}")
    root = home / f"python-{_key(dists)}"
    with open(home / f"{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers and parallel runs share it: one builds
        if not (root / ".complete").exists():
            _build(root, dists)
            (root / ".complete").write_text("")
    return str(root / "bin" / "python")


def pytest_command() -> str:
    """`<the samples' python> -m pytest`: the test command of a test that names its interpreter."""
    return f"{python()} -m pytest"
