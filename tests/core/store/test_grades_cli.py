"""`reviewui bite` after a push: each hunk says `evidence: reused|fresh` and the summary counts them;
`--fresh` reruns all; `delta` shows each hunk's grade beside its state."""

from __future__ import annotations

import json

import pytest

from tests.clirun import run_cli
from tests.core.bite.helpers import use_venv_python
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow

BASE = {
    "pkg/__init__.py": "",
    "pkg/a.py": "def a(x):\n    return x\n",
    "pkg/b.py": "def b(x):\n    return x\n",
}
BRANCH = {
    "pkg/a.py": "def a(x):\n    return x + 1\n",
    "pkg/b.py": "def b(x):\n    return x * 2\n",
    "tests/__init__.py": "",
    "tests/test_a.py": "from pkg.a import a\n\n\ndef test_a():\n    assert a(1) == 2\n",
    "tests/test_b.py": "from pkg.b import b\n\n\ndef test_b():\n    assert b(3) == 6\n",
}


def test_a_push_reuses_the_unchanged_hunk_and_fresh_reruns_all(tmp_path, monkeypatch) -> None:
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "repo", BASE, BRANCH)
    first = run_cli("bite", "agent/work", "--format", "json", cwd=rb.root)
    assert first.returncode == 0, first.stderr
    doc = json.loads(first.stdout)
    assert doc["evidence"] == {"hunks": {"fresh": 2, "reused": 0}, "guards": {"fresh": 0, "reused": 0}}
    assert run_cli("verdict", "agent/work", "approve", cwd=rb.root).returncode == 0
    rb.checkout("agent/work")
    rb.commit({"pkg/b.py": "def b(x):\n    return x * 2 + 0\n"}, "push")
    rb.checkout("main")
    again = run_cli("bite", "agent/work", "--format", "json", cwd=rb.root)
    doc = json.loads(again.stdout)
    assert {h["file"]: h["evidence"] for h in doc["hunks"]} == {"pkg/a.py": "reused", "pkg/b.py": "fresh"}
    assert doc["evidence"]["hunks"] == {"fresh": 1, "reused": 1}
    assert {h["file"]: h["verdict"] for h in doc["hunks"]} == {"pkg/a.py": "bites", "pkg/b.py": "bites"}
    delta = json.loads(run_cli("delta", "agent/work", "--format", "json", cwd=rb.root).stdout)
    assert [(h["file"], h["state"], h["evidence"], h["verdict"]) for h in delta["hunks"]] == [
        ("pkg/a.py", "unchanged", "reused", "bites"), ("pkg/b.py", "changed", "fresh", "bites"),
        ("tests/__init__.py", "unchanged", None, None), ("tests/test_a.py", "unchanged", None, None),
        ("tests/test_b.py", "unchanged", None, None)]
    fresh = run_cli("bite", "agent/work", "--fresh", cwd=rb.root)
    assert "(reused)" not in fresh.stdout and "evidence:" not in fresh.stdout
    text = run_cli("bite", "agent/work", "--hunk", "pkg/a.py", cwd=rb.root).stdout  # a sweep of one hunk reuses too
    assert "pkg/a.py hunk 1 @@ -1,2 +1,2 @@ (reused)" in text and "evidence: 1 hunk(s) reused, 0 fresh" in text
