"""Queue test repos: the user dirs isolated, and one agent branch whose test bites its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.bite.helpers import use_venv_python
from tests.gitrepo import RepoBuilder


def isolate_user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """State, cache and config of this test's own (verdict provenance, snoozes, the evidence store)."""
    for var, name in (("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache"), ("XDG_CONFIG_HOME", "config")):
        monkeypatch.setenv(var, str(tmp_path / name))


def fix_add_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    """A repo whose `agent/fix-add` fixes `add` with a test that bites the fix; `python` is this venv's."""
    use_venv_python(monkeypatch)
    isolate_user_dirs(tmp_path, monkeypatch)
    rb = RepoBuilder(tmp_path / "r")
    rb.commit({"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a - b\n"}, "base")
    rb.branch("agent/fix-add")
    rb.commit({"pkg/calc.py": "def add(a, b):\n    return a + b\n",
               "tests/test_calc.py": "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"},
              "fix add")
    rb.checkout("main")
    return rb
