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


def test_log_json_carries_the_evidence_and_only_the_latest_verdict_is_current(tmp_path: Path) -> None:
    import dataclasses
    from datetime import timedelta

    from reviewui.core.notes.verdicts import (
        BiteRecord, CommentRecord, FindingRecord, ProbeRecord, Review, log_json, record_review,
    )

    make_repo(tmp_path, {"a.py": "A = 1\n"}, {"a.py": "A = 2\n"})
    evidence = dict(
        bites=[BiteRecord("a.py", "@@ -1 +1 @@", "toothless")],
        probes=[ProbeRecord("probe_a", "def test_a(): assert False", "fail", "fail")],
        comments=[CommentRecord("a.py", "@@ -1 +1 @@", 1, "why 2?")],
        findings=[FindingRecord("toothless-hunk", "a.py hunk 1 bites nothing")],
    )
    reject = Review.new("reject", "no test", repo_dir=tmp_path, branch="agent/work", base="main", head="agent/work",
                        **evidence)
    record_review(tmp_path, reject)
    approve = Review.new("approve", "fine after all", repo_dir=tmp_path, branch="agent/work", base="main",
                         head="agent/work")
    record_review(tmp_path, dataclasses.replace(approve, at=reject.at + timedelta(seconds=1)))
    first, second = log_json(tmp_path, "agent/work", "main", "agent/work")["reviews"]
    assert (first["verdict"], first["current"]) == ("reject", False)
    assert (second["verdict"], second["current"]) == ("approve", True)
    assert first["bites"] == [{"file": "a.py", "header": "@@ -1 +1 @@", "verdict": "toothless", "failing_tests": []}]
    assert first["probes"][0]["branch"] == "fail" and first["probes"][0]["code"].startswith("def test_a")
    assert first["comments"] == [{"file": "a.py", "header": "@@ -1 +1 @@", "line": 1, "text": "why 2?"}]
    assert first["findings"] == [{"kind": "toothless-hunk", "message": "a.py hunk 1 bites nothing"}]
    assert second["bites"] == [] and second["signature"]["status"] == "unsigned"
