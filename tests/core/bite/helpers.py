"""Shared builders for bite-check tests: small real repos and a PATH whose `python` is the samples' (tests/project_python.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reviewui.core.config import Settings
from reviewui.core.diff import load_diff
from reviewui.core.target import resolve_target
from tests.gitrepo import RepoBuilder, make_repo
from tests.project_python import python as project_python

VENV_BIN = str(Path(project_python()).parent)
"""The bin directory of the samples' venv: its `python` has pytest, coverage and the common plugins."""


def use_venv_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `python` on PATH the samples' interpreter (it has pytest and coverage)."""
    monkeypatch.setenv("PATH", VENV_BIN + os.pathsep + os.environ.get("PATH", ""))


def load(root: Path, branch: str = "agent/work"):
    """(target, diff) for `branch` of the repo at `root`."""
    t = resolve_target(root, branch)
    return t, load_diff(str(root), t.base, t.head)


def settings(**kw) -> Settings:
    return Settings(**kw)


# A base where every source file exists; the branch changes each in one hunk.
BASE = {
    "pkg/__init__.py": "",
    "pkg/guard.py": "def clamp(x, lo, hi):\n    return x\n",
    "pkg/log.py": "def label(x):\n    return 'x'\n",
    "pkg/branchy.py": "def pick(mode):\n    if mode == 'slow':\n        return 's'\n    return 'd'\n",
    "pkg/names.py": "VALUE = 1\n",
    "README.md": "demo\n",
}

BRANCH = {
    # bites: the test checks the guard
    "pkg/guard.py": "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    return x\n",
    # toothless: a test calls label() but never looks at the result
    "pkg/log.py": "def label(x):\n    return 'value=' + str(x)\n",
    # uncovered: no test takes the new branch
    "pkg/branchy.py": (
        "def pick(mode):\n    if mode == 'slow':\n        return 's'\n"
        "    if mode == 'fast':\n        return 'f'\n    return 'd'\n"
    ),
    # broken: a test imports the name this hunk adds
    "pkg/names.py": "VALUE = 1\n\n\ndef helper():\n    return 1\n",
    "tests/__init__.py": "",
    "tests/test_feature.py": (
        "from pkg.guard import clamp\n"
        "from pkg.log import label\n"
        "from pkg.branchy import pick\n\n\n"
        "def test_clamp():\n    assert clamp(-5, 0, 10) == 0\n\n\n"
        "def test_label_runs():\n    label(3)\n\n\n"
        "def test_pick():\n    assert pick('slow') == 's'\n"
    ),
    "tests/test_names.py": "from pkg.names import helper\n\n\ndef test_helper():\n    assert helper() == 1\n",
    "README.md": "demo\nmore\n",
}


def feature_repo(root: Path) -> RepoBuilder:
    """The four-verdict repo: guard bites, label toothless, pick uncovered, helper broken."""
    return make_repo(root, BASE, BRANCH)


def alive(pid: int) -> bool:
    """True while process `pid` runs (a zombie awaiting its reaper counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def marked(tag: str) -> dict[int, int]:
    """{pid: parent pid} of live processes whose command line contains `tag`, as the host sees them.

    Runs happen in their own PID namespace, so a test cannot report its pids
    (nor write a file outside its scratch): hostile tests name their children
    with a tag instead, and the host finds them in its /proc.
    """
    found: dict[int, int] = {}
    needle = tag.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "cmdline").read_bytes():
                stat = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
                if stat[0] != "Z":
                    found[int(entry.name)] = int(stat[1])
        except OSError:
            continue
    return found


class Watch:
    """Collects, in a thread, every pid (and the parent it had first) that carried `tag` while the block ran."""

    def __init__(self, tag: str) -> None:
        import threading

        self.tag = tag
        self.seen: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            for pid, parent in marked(self.tag).items():
                # The first parent seen: once its parent is killed, a process is briefly
                # reparented to its namespace's init, which lives on (and is no run's).
                self.seen.setdefault(pid, parent)
            self._stop.wait(0.02)

    def __enter__(self) -> "Watch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
