"""The queue read from a real repository: currency across a rebase and a rework, merged although
rejected, snoozes, hostile names, and the headless JSON contract."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.queue.order import order
from reviewui.core.queue.read import read_records, snooze
from tests.clirun import run_cli
from tests.gitrepo import RepoBuilder


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    rb = RepoBuilder(tmp_path / "r")
    rb.commit({"calc.py": "def add(a, b):\n    return a + b\n", "other.txt": "x\n"}, "base")
    for name, body in (("rebased", "def add(a, b):\n    return b + a\n"), ("reworked", "def add(a, b):\n    return 0\n"),
                       ("plain", "def add(a, b):\n    return a+b\n")):
        rb.branch(f"agent/{name}")
        rb.commit({"calc.py": body}, f"agent: {name}")
        rb.checkout("main")
    return rb


def _verdict(rb: RepoBuilder, branch: str, word: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    proc = subprocess.run([sys.executable, "-m", "reviewui", "verdict", branch, word, "--reason", "because"],
                          cwd=rb.root, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def _rows(rb: RepoBuilder) -> dict[str, object]:
    return {r.record.branch: r for r in order(read_records(rb.root, "main"))}


def test_currency_is_current_then_carried_by_a_rebase_then_outdated_by_rework(repo: RepoBuilder) -> None:
    _verdict(repo, "agent/rebased", "approve")
    _verdict(repo, "agent/reworked", "approve")
    rows = _rows(repo)
    assert rows["agent/rebased"].record.currency == "current" and rows["agent/rebased"].tier == 5
    # main moves on; one branch is rebased onto it (same patch), the other reworked
    repo.commit({"other.txt": "y\n"}, "main moves")
    repo.checkout("agent/rebased")
    repo.git("rebase", "-q", "main")
    repo.checkout("agent/reworked")
    repo.commit({"calc.py": "def add(a, b):\n    return -1\n"}, "rework")
    repo.checkout("main")
    rows = _rows(repo)
    assert (rows["agent/rebased"].record.currency, rows["agent/rebased"].tier) == ("carried", 5)
    assert (rows["agent/reworked"].record.currency, rows["agent/reworked"].tier) == ("outdated", 1)
    assert rows["agent/plain"].record.currency == "none"


def test_a_rejected_branch_merged_anyway_needs_you_now(repo: RepoBuilder) -> None:
    _verdict(repo, "agent/plain", "reject")
    assert _rows(repo)["agent/plain"].tier == 4
    repo.git("merge", "-q", "--ff-only", "agent/plain")
    row = _rows(repo)["agent/plain"]
    assert (row.tier, row.reason) == (1, "merged although rejected")


def test_a_snooze_survives_a_refresh_and_clears_when_the_branch_moves(repo: RepoBuilder) -> None:
    head = repo.git("rev-parse", "agent/plain")
    snooze(repo.root, "agent/plain", head)
    assert _rows(repo)["agent/plain"].tier == 4
    assert _rows(repo)["agent/plain"].reason == "snoozed until the branch changes"
    repo.checkout("agent/plain")
    repo.commit({"calc.py": "def add(a, b):\n    return a + b + 0\n"}, "moves")
    repo.checkout("main")
    assert _rows(repo)["agent/plain"].tier == 3


def test_the_headless_json_contract_and_hostile_names(repo: RepoBuilder) -> None:
    # git refuses control characters in ref names, not bidi overrides: the name reads backwards raw
    repo.git("branch", "agent/\u202etxt.exe", "agent/plain")
    proc = run_cli("queue", "--format", "json", cwd=repo.root)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["rows"]
    assert {"branch", "head", "base", "tier", "reason", "verdict", "currency", "bite", "findings", "transcript",
            "waiting_since"} <= set(rows[0])
    assert [r["tier"] for r in rows] == sorted(r["tier"] for r in rows)
    assert all(r["bite"] is None and r["currency"] == "none" for r in rows)
    text = run_cli("queue", "--format", "text", cwd=repo.root)
    assert text.returncode == 0 and "\u202e" not in text.stdout
    assert "agent/\\u202etxt.exe" in text.stdout  # drawn, escaped


def test_the_queue_app_without_a_terminal_refuses_and_names_the_headless_twin(repo: RepoBuilder) -> None:
    proc = run_cli("queue", cwd=repo.root)
    assert proc.returncode == 2 and "--format text|json" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_a_sweep_fills_the_evidence_in_and_the_row_moves_to_ready(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.core.queue.helpers import fix_add_repo

    rb = fix_add_repo(tmp_path, monkeypatch)
    before = json.loads(run_cli("queue", "--format", "json", cwd=rb.root).stdout)["rows"]
    assert [(r["tier"], r["bite"]) for r in before] == [(3, None)]
    proc = run_cli("queue", "--sweep", "--format", "json", cwd=rb.root, timeout=600)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["rows"]
    assert rows[0]["tier"] == 2 and rows[0]["bite"]["bites"] >= 1 and rows[0]["bite"]["toothless"] == 0, rows
    # drawing the queue again runs nothing and reads the same evidence from the store
    again = json.loads(run_cli("queue", "--format", "json", cwd=rb.root).stdout)["rows"]
    assert again[0]["bite"] == rows[0]["bite"]


def test_which_branches_are_queued_comes_from_the_base_config(repo: RepoBuilder) -> None:
    repo.commit({".reviewui.toml": 'queue-branches = ["refs/heads/bot/*"]\n'}, "queue the bot's branches")
    repo.git("branch", "bot/one", "agent/plain")
    rows = json.loads(run_cli("queue", "--format", "json", cwd=repo.root).stdout)["rows"]
    assert [r["branch"] for r in rows] == ["bot/one"]
    repo.commit({".reviewui.toml": 'queue-branches = ["agent/*"]\n'}, "not a ref pattern")
    proc = run_cli("queue", "--format", "json", cwd=repo.root)
    assert proc.returncode == 2 and "queue-branches" in proc.stderr and "Traceback" not in proc.stderr


def test_reviewui_alone_on_the_base_with_agent_branches_offers_the_queue(repo: RepoBuilder) -> None:
    proc = run_cli(cwd=repo.root)  # no terminal here: the queue app says so, and names its headless twin
    assert proc.returncode == 2 and "queue" in proc.stderr and "--format text|json" in proc.stderr, proc.stderr
    repo.checkout("agent/plain")
    proc = run_cli(cwd=repo.root)  # on a branch of its own: that branch's review, as ever
    assert proc.returncode == 2 and "queue" not in proc.stderr, proc.stderr


def test_two_graphs_joined_are_the_graph_of_both(tmp_path: Path) -> None:
    """The queue asks git for the new heads' graph while the notes are read, then for the reviewed ones'."""
    from reviewui.core.queue.git_batch import branch_graph

    rb = RepoBuilder(tmp_path / "r")
    first = rb.commit({"a.py": "x = 0\n"}, "base")
    rb.branch("agent/one", "main")
    one = rb.commit({"one.py": "x = 1\n"})
    rb.checkout("main")
    second = rb.commit({"a.py": "x = 2\n"}, "main moves")
    rb.branch("agent/two", "main")
    two = rb.commit({"two.py": "y = 2\n"})
    rb.git("merge", "-q", "--no-edit", "agent/one")  # two parents beyond the base, leaving it at two commits
    merged = rb.git("rev-parse", "HEAD")
    rb.checkout("main")
    heads = [one, two, merged]
    both = branch_graph(rb.root, second, heads)
    joined = branch_graph(rb.root, second, heads[:1]).joined(branch_graph(rb.root, second, heads[1:]))
    assert (joined.parents, joined.boundary) == (both.parents, both.boundary)
    assert [joined.own_commits(h) for h in heads] == [both.own_commits(h) for h in heads]
    assert [joined.merge_base(h) for h in heads] == [first, second, None]  # None: git merge-base decides
