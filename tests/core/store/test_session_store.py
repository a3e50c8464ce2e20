"""The store through the session and the CLI: a new process shows what the last stored, with its age; a
changed head or test command makes it stale (never current); `--fresh` reruns; the `tests` JSON contract."""

from __future__ import annotations

import json

import pytest

from reviewui.core.session import ReviewSession, RunOptions
from tests.clirun import run_cli
from tests.core.bite.helpers import use_venv_python
from tests.core.bite.test_truth_table import GREEN_BASE, GREEN_BRANCH
from tests.gitrepo import make_repo

pytestmark = pytest.mark.slow


@pytest.fixture
def repo(tmp_path, monkeypatch):
    use_venv_python(monkeypatch)
    return make_repo(tmp_path / "repo", GREEN_BASE, GREEN_BRANCH)


def test_a_new_process_shows_the_stored_sweep_with_its_age_and_fresh_reruns(repo) -> None:
    first = run_cli("bite", "agent/work", "--format", "json", cwd=repo.root)
    assert first.returncode in (0, 1), first.stderr
    assert "stored results" not in first.stderr
    again = run_cli("bite", "agent/work", "--format", "json", cwd=repo.root)
    assert again.returncode == first.returncode
    line = [ln for ln in again.stderr.splitlines() if "stored results" in ln]
    assert len(line) == 1 and ", this head (rerun with --fresh)" in line[0] and "from " in line[0]
    # issue 40: the stored sweep's grades are said to be `reused` (nothing ran), the first run's `fresh`
    strip = lambda doc: {**doc, "hunks": [{**h, "seconds": 0, "evidence": "-"} for h in doc["hunks"]],  # noqa: E731
                         "evidence": "-"}
    assert strip(json.loads(again.stdout)) == strip(json.loads(first.stdout))
    assert {h["evidence"] for h in json.loads(first.stdout)["hunks"]} == {"fresh"}
    assert {h["evidence"] for h in json.loads(again.stdout)["hunks"]} == {"reused"}
    fresh = run_cli("bite", "agent/work", "--format", "json", "--fresh", cwd=repo.root)
    assert fresh.returncode == first.returncode and "stored results" not in fresh.stderr


def test_a_reopened_session_gets_the_stored_evidence_into_its_ledger(repo) -> None:
    session = ReviewSession.open(repo.root, "agent/work")
    report = session.bite(guards=True)
    assert session.save_evidence(report, session.tests_table(report))
    reopened = ReviewSession.open(repo.root, "agent/work")  # another session: nothing in memory
    reopened.evidence.add_stored(reopened.stored())
    ledger = reopened.evidence
    assert ledger.report == report and set(ledger.bites) == {r.key for r in report.results}
    assert ledger.truth_table is not None and ledger.truth_table.status == "complete"
    assert (ledger.stored_words() or "").endswith(", this head")
    assert ReviewSession.open(repo.root, "agent/work", run=RunOptions(fresh=True)).stored().bite is None


def test_a_new_head_makes_the_stored_sweep_stale_never_current(repo) -> None:
    session = ReviewSession.open(repo.root, "agent/work")
    session.save_evidence(session.bite())
    repo.checkout("agent/work")
    repo.commit({"pkg/ops.py": "def sub(a, b):\n    return a - b - 0\n"}, "agent again")
    repo.checkout("main")
    later = ReviewSession.open(repo.root, "agent/work")
    stored = later.stored()
    assert stored.bite is not None and stored.bite.changed == ("head",) and stored.table is None
    later.evidence.add_stored(stored)
    assert later.evidence.bites == {} and later.evidence.report is None  # shown as stale, never as current
    assert "stale: head changed" in (later.evidence.stored_words() or "")
    cli = run_cli("bite", "agent/work", "--format", "json", cwd=repo.root)
    assert "stale: head changed: running afresh" in cli.stderr


def test_another_test_command_makes_it_stale(repo) -> None:
    assert run_cli("bite", "agent/work", cwd=repo.root).returncode in (0, 1)
    other = run_cli("bite", "agent/work", "--test-cmd", "python -m pytest -x", cwd=repo.root)
    assert "stale: test command changed: running afresh" in other.stderr
    stored = ReviewSession.open(repo.root, "agent/work", run=RunOptions(test_cmd="python -m pytest -x")).stored()
    assert stored.bite is not None and stored.bite.current  # the second run was stored under its own key


def test_tests_json_contract(repo) -> None:
    proc = run_cli("tests", "agent/work", "--format", "json", cwd=repo.root)
    assert proc.returncode == 1, proc.stderr  # a new case passes on the base
    doc = json.loads(proc.stdout)
    assert set(doc) >= {"repo", "branch", "head", "base", "test_command", "status", "reason", "tests",
                        "regressions", "already_red", "summary"}
    assert doc["status"] == "complete" and doc["branch"] == "agent/work"
    by = {t["id"]: t for t in doc["tests"]}
    assert set(by["tests/test_sub.py::test_sub"]) == {"id", "file", "line", "change", "head", "base", "base_message",
                                                      "head_message", "bitten_by"}
    assert (by["tests/test_sub.py::test_sub"]["base"], by["tests/test_clamp.py::test_clamp[mid]"]["base"],
            by["tests/test_clamp.py::test_clamp[low]"]["base"]) == ("errors", "passes", "fails")
    assert {"file": "pkg/calc.py", "hunk": 1, "guard_line": None, "guard_kind": None} in \
        by["tests/test_clamp.py::test_clamp[low]"]["bitten_by"]
    assert doc["summary"] == {"tests": 3, "fails_on_base": 1, "errors_on_base": 1, "passes_on_base": 1,
                              "not_run_on_base": 0, "regressions": 0}
    text = run_cli("tests", "agent/work", cwd=repo.root)  # stored now: no test runs again
    assert text.returncode == 1 and "stored results" in text.stderr
    assert "tests/test_clamp.py::test_clamp[mid]" in text.stdout and "base passes" in text.stdout
    check = run_cli("check", "agent/work", "--bite", "--format", "json", cwd=repo.root)
    kinds = {f["kind"] for f in json.loads(check.stdout)["findings"]}
    assert {"test-passes-on-base", "test-only-notices-name"} <= kinds


def test_a_verdict_carries_the_truth_table(repo) -> None:
    import subprocess
    import tomllib

    from reviewui.core.notes.model import Review

    for key, value in (("user.name", "Test Reviewer"), ("user.email", "reviewer@example.com")):
        subprocess.run(["git", "config", key, value], cwd=repo.root, check=True)
    proc = run_cli("verdict", "agent/work", "reject", "--reason", "a test needs nothing", "--with-bites",
                   cwd=repo.root, timeout=300)
    assert proc.returncode == 0, proc.stderr
    head = repo.git("rev-parse", "agent/work")
    note = subprocess.run(["git", "notes", "--ref=reviewui", "show", head], cwd=repo.root, capture_output=True,
                          text=True, check=True).stdout
    [table] = tomllib.loads(note)["review"]
    rows = {t["id"]: (t["change"], t["head"], t["base"]) for t in table["test"]}
    assert rows["tests/test_clamp.py::test_clamp[mid]"] == ("added", "passes", "passes")
    assert rows["tests/test_sub.py::test_sub"] == ("added", "passes", "errors")
    review = Review.from_mapping(table)
    assert review is not None and len(review.tests) == 3 and Review.from_mapping(
        tomllib.loads(review.to_toml())["review"][0]) == review
    assert any(f["kind"] == "test-passes-on-base" for f in table["finding"])


def test_a_stored_guard_sweep_answers_a_plain_bite_in_the_plain_shape(repo) -> None:
    assert run_cli("tests", "agent/work", cwd=repo.root).returncode == 1  # stores a guard-graded sweep
    plain = run_cli("bite", "agent/work", "--format", "json", cwd=repo.root)
    assert "stored results" in plain.stderr
    doc = json.loads(plain.stdout)
    assert "guard_summary" not in doc and all("guards" not in h for h in doc["hunks"])
    guarded = json.loads(run_cli("bite", "agent/work", "--guards", "--format", "json", cwd=repo.root).stdout)
    assert "guard_summary" in guarded
