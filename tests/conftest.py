"""Shared fixtures: isolated user dirs so tests never read or write the developer's config."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests import project_python


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("userdirs")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    # The default test command is `python -m pytest` found on PATH: it must be a Python with
    # pytest and coverage (tests/project_python.py), never whatever `python` the developer's
    # shell finds first (a pyenv shim's global Python has no coverage: no guidance). The suite's
    # own bin follows it, for its console scripts.
    suite_bin = str(Path(sys.executable).parent)
    project_bin = str(Path(project_python.python()).parent)
    monkeypatch.setenv("PATH", os.pathsep.join([project_bin, suite_bin, os.environ.get("PATH", os.defpath)]))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (the README's test command): one worker more than the cores this process may use.

    A fifth of a worker's time is spent waiting (sandboxed runs killed at their timeouts, warm
    servers starting, Pilot waiting on the app), and a third worker fills it: the suite took 573 s
    instead of 647 s on 2 cores (bench/README.md).
    """
    return len(os.sched_getaffinity(0)) + 1
