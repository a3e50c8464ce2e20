"""`reviewui bite --hunk` given more than once checks every file or hunk named, each once (it kept only
the last one given, silently)."""

from __future__ import annotations

import json

import pytest

from tests.clirun import run_cli
from tests.core.bite.helpers import use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

BASE = {"pkg/__init__.py": "", **{f"pkg/{n}.py": f"def {n}(x):\n    return x\n" for n in "abc"}}
BRANCH = {
    **{f"pkg/{n}.py": f"def {n}(x):\n    return x + 1\n" for n in "abc"},
    "tests/__init__.py": "",
    **{f"tests/test_{n}.py": f"from pkg.{n} import {n}\n\n\ndef test_{n}():\n    assert {n}(1) == 2\n" for n in "abc"},
}


def test_each_hunk_named_is_checked_once_and_no_other(tmp_path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "repo", BASE, BRANCH)
    proc = run_cli("bite", "agent/work", "--hunk", "pkg/a.py", "--hunk", "pkg/c.py:1", "--hunk", "pkg/a.py:1",
                   "--format", "json", cwd=rb.root)
    assert proc.returncode == 0, proc.stderr
    assert [(h["file"], h["verdict"]) for h in json.loads(proc.stdout)["hunks"]] == [
        ("pkg/a.py", "bites"), ("pkg/c.py", "bites")]
    one = json.loads(run_cli("bite", "agent/work", "--hunk", "pkg/b.py", "--format", "json", cwd=rb.root).stdout)
    assert [h["file"] for h in one["hunks"]] == ["pkg/b.py"]
    # any one of them wrong is said, whichever place it has
    bad = run_cli("bite", "agent/work", "--hunk", "pkg/a.py", "--hunk", "pkg/nope.py", cwd=rb.root)
    assert bad.returncode != 0 and "pkg/nope.py" in bad.stderr and "Traceback" not in bad.stderr
