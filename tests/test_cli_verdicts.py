"""The headless verdict, log and notes commands on a real repo (and a clone to sync with)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.clirun import run_cli
from tests.gitrepo import make_repo


def test_verdict_then_log_and_amend_makes_it_outdated(tmp_path: Path) -> None:
    rb = make_repo(tmp_path / "r", {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"})
    repo = tmp_path / "r"
    before = rb.snapshot()
    proc = run_cli("verdict", "agent/work", "reject", cwd=repo)
    assert proc.returncode == 2 and "reject" in proc.stderr  # a reject needs a reason
    proc = run_cli("verdict", "agent/work", "approve", "--reason", "looks right", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert rb.snapshot() == before  # notes only: checkout, index, branches untouched
    data = json.loads(run_cli("log", "agent/work", "--format", "json", cwd=repo).stdout)
    [review] = data["reviews"]
    assert (review["verdict"], review["reason"], review["current"]) == ("approve", "looks right", True)
    assert set(review) >= {"id", "verdict", "reason", "reviewer", "at", "branch", "base", "head", "patch_id", "current"}
    rb.checkout("agent/work")
    rb.write({"a.py": "A = 3\n"})
    rb.git("commit", "-qam", "amended", "--amend")
    data = json.loads(run_cli("log", "agent/work", "--format", "json", cwd=repo).stdout)
    assert [r["current"] for r in data["reviews"]] == [False]
    text = run_cli("log", "agent/work", cwd=repo).stdout
    assert "approve" in text and "looks right" in text


def test_verdict_usage_errors(tmp_path: Path) -> None:
    make_repo(tmp_path, {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"})
    for words in (["agent/work", "maybe"], ["a", "b", "approve"]):
        proc = run_cli("verdict", *words, cwd=tmp_path)
        assert proc.returncode == 2 and proc.stderr.startswith("reviewui: usage: reviewui verdict")


def test_notes_push_and_pull_between_clones(tmp_path: Path) -> None:
    make_repo(tmp_path / "origin", {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"})
    subprocess.run(["git", "clone", "-q", str(tmp_path / "origin"), str(tmp_path / "mine")], check=True)
    mine = tmp_path / "mine"
    subprocess.run(["git", "config", "user.email", "me@example.com"], cwd=mine, check=True)
    subprocess.run(["git", "config", "user.name", "Me"], cwd=mine, check=True)
    subprocess.run(["git", "branch", "-q", "agent/work", "origin/agent/work"], cwd=mine, check=True)
    assert run_cli("verdict", "agent/work", "approve", cwd=mine).returncode == 0
    proc = run_cli("notes", "push", "origin", cwd=mine)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(run_cli("log", "agent/work", "--format", "json", cwd=tmp_path / "origin").stdout)
    assert [r["reviewer"] for r in data["reviews"]] == ["Me <me@example.com>"]
    proc = run_cli("notes", "pull", "nowhere", cwd=mine)
    assert proc.returncode == 2 and proc.stderr.startswith("reviewui: ")
