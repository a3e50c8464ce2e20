"""The queue of a fleet: every branch listed or the cut said, evidence only when its key is the branch's key
now (decided as `bite` decides), empty branches said as such, a verdict on one's own work warned about."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from reviewui.core.bite.report import Baseline, BiteReport, HunkResult
from reviewui.core.queue.order import order
from reviewui.core.queue.read import QueueSource, read_queue
from reviewui.core.session import ReviewSession, RunOptions
from tests.clirun import run_cli
from tests.gitrepo import ENV, RepoBuilder


@pytest.fixture
def repo(tmp_path: Path) -> RepoBuilder:
    rb = RepoBuilder(tmp_path / "r")
    rb.commit({"calc.py": "def add(a, b):\n    return a + b\n"}, "base")
    rb.branch("agent/one")
    rb.commit({"calc.py": "def add(a, b):\n    return b + a\n"}, "agent: swap")
    rb.checkout("main")
    return rb


def sweep_of(session: ReviewSession, verdict: str = "toothless") -> BiteReport:
    """A finished sweep of the session's one hunk, graded `verdict` (made by hand: no test runs here)."""
    hunk = session.diff.files[0].hunks[0]
    result = HunkResult(session.diff.files[0].path, 0, hunk.header, "", verdict,
                        failing_tests=() if verdict != "bites" else ("test_calc.py::test_add",))
    return BiteReport(Baseline("green", tests=("test_calc.py::test_add",)), (result,), ("test_calc.py",),
                      session.test_command)


def rows(rb: RepoBuilder) -> dict[str, object]:
    return {r.record.branch: r for r in QueueSource(rb.root, "main", ("refs/heads/agent/*",), False,
                                                      "refs/notes/reviewui", ()).rows()}


def test_a_sweep_stored_under_another_key_is_stale_in_the_queue_as_bite_calls_it(repo: RepoBuilder) -> None:
    other = ReviewSession.open(repo.root, "agent/one", "main", run=RunOptions(test_cmd="python -m pytest -x"))
    assert other.save_evidence(sweep_of(other, "bites"))
    row = rows(repo)["agent/one"]
    assert (row.tier, row.record.evidence.status) == (3, "stale")
    assert row.reason == "evidence stale (test command changed)"
    # `bite` (the session it opens) decides the same: stale, for the same reason
    plain = ReviewSession.open(repo.root, "agent/one", "main")
    stored = plain.stored().bite
    assert stored is not None and not stored.current and stored.changed == ("test_command",)
    # a sweep under the branch's key now is ready, for both
    assert plain.save_evidence(sweep_of(plain, "toothless"))
    row = rows(repo)["agent/one"]
    assert (row.tier, row.record.evidence.status, row.record.evidence.toothless) == (2, "ready", 1)
    assert ReviewSession.open(repo.root, "agent/one", "main").stored().bite.current  # type: ignore[union-attr]
    # the config in force at the base changes: the queue and bite both call the stored sweep stale
    repo.commit({".reviewui.toml": "timeout = 99\n"}, "base config")
    repo.checkout("agent/one")
    repo.git("rebase", "-q", "main")
    repo.checkout("main")
    row = rows(repo)["agent/one"]
    assert row.record.evidence.status == "stale" and "head changed" in row.reason and "config changed" in row.reason
    moved = ReviewSession.open(repo.root, "agent/one", "main").stored().bite
    assert moved is not None and set(moved.changed) == {"head", "base", "config"}


def test_an_empty_branch_says_no_commits_beyond_the_base_in_json_and_text(repo: RepoBuilder) -> None:
    repo.git("branch", "agent/fresh", "main")  # made, not worked on yet
    repo.branch("agent/undo")
    repo.commit({"calc.py": "def add(a, b):\n    return 0\n"}, "agent: break it")
    repo.commit({"calc.py": "def add(a, b):\n    return a + b\n"}, "agent: undo it")
    repo.checkout("main")
    doc = json.loads(run_cli("queue", "--format", "json", cwd=repo.root).stdout)
    by = {r["branch"]: r for r in doc["rows"]}
    assert (by["agent/fresh"]["reason"], by["agent/fresh"]["evidence"]) == ("no commits beyond the base", "empty")
    assert (by["agent/undo"]["reason"], by["agent/undo"]["evidence"]) == ("no change against the base", "empty")
    assert by["agent/fresh"]["tier"] == by["agent/undo"]["tier"] == 4
    assert "no commits beyond the base" in run_cli("queue", "--format", "text", cwd=repo.root).stdout


def _fast_import(rb: RepoBuilder, n: int) -> None:
    """`n` agent branches of one commit each, in one fast-import (a branch per minute, the last the oldest)."""
    base = rb.git("rev-parse", "main")
    parts = []
    for i in range(n):
        text = f"X = {i}\n"
        parts.append(f"commit refs/heads/agent/t{i:05d}\ncommitter A <a@x> {1800000000 - 60 * i} +0000\n"
                     f"data 5\nwork\nfrom {base}\nM 100644 inline f{i % 7}.py\ndata {len(text)}\n{text}\n")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=rb.root, input="".join(parts).encode(), check=True,
                   env={**os.environ, **ENV})


def test_past_the_cap_the_oldest_are_left_out_and_said_everywhere(repo: RepoBuilder) -> None:
    _fast_import(repo, 7)
    records, omitted = read_queue(repo.root, "main", limit=5)
    assert (len(records), omitted) == (5, 3)  # 8 branches: agent/one and seven more
    assert "agent/t00006" not in {r.branch for r in records}  # the oldest goes, and is counted
    from reviewui.core.queue.report import render_json, render_text

    assert render_json(order(records), omitted)["omitted"] == 3
    assert "(3 older branches not listed" in render_text(order(records), omitted=omitted)


@pytest.mark.slow
def test_ten_thousand_branches_are_all_listed_and_one_more_is_said(repo: RepoBuilder) -> None:
    _fast_import(repo, 9_999)  # with agent/one: exactly the cap
    doc = json.loads(run_cli("queue", "--format", "json", cwd=repo.root, timeout=600).stdout)
    assert (len(doc["rows"]), doc["omitted"]) == (10_000, 0)
    assert {"agent/t09998", "agent/t00000", "agent/one"} <= {r["branch"] for r in doc["rows"]}
    repo.git("branch", "agent/zzz-the-last-by-name", "main~0")
    doc = json.loads(run_cli("queue", "--format", "json", cwd=repo.root, timeout=600).stdout)
    assert (len(doc["rows"]), doc["omitted"]) == (10_000, 1)
    text = run_cli("queue", "--format", "text", cwd=repo.root, timeout=600).stdout
    assert text.rstrip().endswith("(1 older branch not listed (the queue lists the newest 10,000))")


def test_a_verdict_on_ones_own_work_is_warned_about_before_it_is_recorded(repo: RepoBuilder) -> None:
    repo.git("config", "user.email", ENV["GIT_AUTHOR_EMAIL"])  # the reviewer is the branch's author
    proc = run_cli("verdict", "agent/one", "approve", cwd=repo.root)
    assert proc.returncode == 0
    assert "warning: you (Test Reviewer <author@example.com>) are the author of the head commit" in proc.stderr
    repo.git("config", "user.email", "reviewer@example.com")
    assert "warning" not in run_cli("verdict", "agent/one", "approve", cwd=repo.root).stderr
    view = ReviewSession.open(repo.root, "agent/one", "main").history_view()
    assert view.self_review == "" and view.verdict is not None


def test_stored_sweeps_are_found_for_many_keys_with_the_rule_latest_for_uses(tmp_path: Path) -> None:
    from reviewui.core.store import EvidenceStore
    from tests.core.store.test_evidence_store import KEY, report

    store = EvidenceStore.open(tmp_path / "e.sqlite")
    keys = [replace(KEY, branch=f"agent/{i}", head=f"{i:040x}") for i in range(1200)]  # past one statement
    for k in keys[::2]:
        store.save_bite(k, report())
    stale = replace(keys[1], test_command="other")
    store.save_bite(stale, report())
    many = store.latest_for_many(keys, "bite", BiteReport)
    assert set(many) == {k.digest for k in keys[::2]} | {keys[1].digest}
    for k in keys[:40]:
        one = store.latest_for(k, "bite", BiteReport)
        assert (one is None) == (k.digest not in many)
        if one is not None:
            assert (one.key, one.changed) == (many[k.digest].key, many[k.digest].changed)
    assert many[keys[1].digest].changed == ("test_command",)
