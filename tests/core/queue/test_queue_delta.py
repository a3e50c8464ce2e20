"""The queue's delta: an outdated verdict's branch says how many hunks changed since, and a small delta
goes before a new branch of the same tier."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.queue.order import BranchRecord, Evidence, delta_words, order
from reviewui.core.queue.read import read_records
from reviewui.core.queue.report import render_json, render_text
from tests.core.delta.test_compute import FUNCS, _edit
from tests.core.queue.test_queue_order import READY, rec
from tests.gitrepo import RepoBuilder


def test_a_small_delta_goes_before_a_new_branch_of_its_tier() -> None:
    new_older = rec("new", hours_ago=9, evidence=READY)
    small = rec("small", hours_ago=1, evidence=READY, verdict="reject", currency="outdated", delta=2)
    big = rec("big", hours_ago=2, evidence=READY, verdict="reject", currency="outdated", delta=40)
    risky_new = rec("risky", hours_ago=1, evidence=Evidence("ready", toothless=4))
    assert [r.record.branch for r in order([new_older, big, risky_new, small])] == ["small", "risky", "new", "big"]
    # the tier still comes first: a small delta of an outdated approve is tier 1 anyway
    assert [r.tier for r in order([small, rec("a", verdict="approve", currency="outdated", delta=9)])] == [1, 2]


def test_delta_words() -> None:
    r = rec("x", verdict="approve", currency="outdated", delta=3, verdict_mine=True)
    assert delta_words(r) == "changed since your approve: 3 hunks"
    assert delta_words(BranchRecord(**{**r.__dict__, "verdict_mine": False, "delta": 1})) == \
        "changed since the approve: 1 hunk"
    assert delta_words(rec("y")) == ""


def _verdict(rb: RepoBuilder, branch: str, word: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    proc = subprocess.run([sys.executable, "-m", "reviewui", "verdict", branch, word, "--reason", "because"],
                          cwd=rb.root, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture
def reworked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    """agent/reworked approved by the reviewer, then two of its three hunks changed; agent/new never reviewed."""
    for var, name in (("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache"), ("XDG_CONFIG_HOME", "config")):
        monkeypatch.setenv(var, str(tmp_path / name))
    rb = RepoBuilder(tmp_path / "r")
    rb.commit({"mod.py": FUNCS}, "base")
    rb.branch("agent/reworked")
    rb.commit({"mod.py": _edit(_edit(_edit(FUNCS, 1, "    return 1\n"), 5, "    return 5\n"), 9, "    return 9\n")})
    rb.checkout("main")
    _verdict(rb, "agent/reworked", "approve")
    rb.checkout("agent/reworked")
    rb.commit({"mod.py": _edit(_edit(_edit(FUNCS, 1, "    return 1\n"), 5, "    return 55\n"), 11, "    return 11\n")})
    rb.branch("agent/new", "main")
    rb.commit({"mod.py": _edit(FUNCS, 3, "    return 3\n")})
    rb.checkout("main")
    return rb


def test_the_delta_column_headless(reworked: RepoBuilder) -> None:
    rows = {r.record.branch: r for r in order(read_records(reworked.root, "main"))}
    r = rows["agent/reworked"].record
    assert (r.currency, r.delta, r.verdict_mine) == ("outdated", 2, True)  # one hunk changed, one new; one gone
    assert rows["agent/new"].record.delta is None
    doc = render_json(list(rows.values()))
    assert {x["branch"]: x["delta"] for x in doc["rows"]} == {"agent/reworked": 2, "agent/new": None}
    assert "agent/reworked" in render_text(list(rows.values())) and \
        "changed since your approve: 2 hunks" in render_text(list(rows.values()))
    again = {r.record.branch: r for r in order(read_records(reworked.root, "main"))}  # cached now: the same
    assert again["agent/reworked"].record.delta == 2
    assert json.loads(json.dumps(doc)) == doc


def test_the_queues_batched_delta_is_reviewui_deltas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Branches approved, then re-indented, renamed, rebased: the queue's count is `reviewui delta`'s."""
    import reviewui.core.delta.batch as batch
    from reviewui.cli import main

    rb = RepoBuilder(tmp_path / "r")
    rb.commit({"mod.py": FUNCS, "other.py": FUNCS}, "base")
    def version(loop_end: str = "    return s\n", f7: str = "    return 7\n") -> str:
        return _edit(_edit(FUNCS, 2, "    for y in x:\n        s = y\n" + loop_end), 7, f7)
    v1 = version()
    reworks = {
        "agent/reindent": {"mod.py": version(loop_end="        return s\n")},
        "agent/rename": {"mod.py": None, "pkg/mod.py": _edit(v1, 9, "    return 9\n")},
        "agent/rebase": {"mod.py": "import os\n\n\n" + version(f7="    return 77\n")},
    }
    for branch in reworks:
        rb.branch(branch, "main")
        rb.commit({"mod.py": v1})
        assert main(["verdict", branch, "approve", "--repo", str(rb.root)]) == 0
    rb.checkout("main")
    moved = rb.commit({"mod.py": "import os\n\n\n" + FUNCS, "other.py": FUNCS + "X = 1\n"}, "upstream")
    for branch, files in reworks.items():
        rb.checkout(branch)
        if branch == "agent/rebase":
            rb.git("reset", "-q", "--hard", moved)
        rb.commit(files)
    rb.checkout("main")
    capsys.readouterr()

    def alone(*_: object) -> None:
        raise AssertionError("computed one by one, not in the batch")
    monkeypatch.setattr(batch, "_one", alone)
    rows = {r.branch: r for r in read_records(rb.root, "main")}
    for branch in reworks:
        assert main(["delta", branch, "--repo", str(rb.root), "--format", "json"]) == 0
        counts = json.loads(capsys.readouterr().out)["counts"]
        assert rows[branch].currency == "outdated", (branch, {b: (r.currency, r.delta) for b, r in rows.items()})
        assert rows[branch].delta == counts["changed"] + counts["new"], branch
        assert counts["changed"] + counts["new"] > 0 and counts["unchanged"] > 0, branch  # a delta worth comparing
