"""The first story end to end with guard reverts: what the agent's fixture dodges comes out toothless."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewui.demo import build_sample
from tests.clirun import run_cli
from tests.project_python import pytest_command

PY = pytest_command()
TESTS = "tests/test_trim_reasoning.py::"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample("01-trim-reasoning", tmp_path_factory.mktemp("story")).repo_dir


def guard_verdicts(repo: Path, branch: str) -> tuple[dict, dict[tuple[int, str, str], dict]]:
    proc = run_cli("bite", branch, "--guards", "--test-cmd", PY, "--format", "json", cwd=repo)
    data = json.loads(proc.stdout)
    [hunk] = data["hunks"]
    return hunk, {(g["line"], g["kind"], g["description"]): g for g in hunk["guards"]}


def test_agent_branch_shows_the_guard_its_fixture_dodges(story: Path) -> None:
    hunk, guards = guard_verdicts(story, "agent/trim-reasoning")
    assert hunk["verdict"] == "broken"  # the hunk revert only removes a name ...
    toothless = sorted((line, kind, d) for (line, kind, d), g in guards.items() if g["verdict"] == "toothless")
    # ... but inside it, one guard no test notices: the fixture never has a non-assistant message with reasoning.
    assert toothless == [(57, "operand", '`msg.role == "assistant"` dropped from the condition')]
    assert guards[(57, "operand", "`msg.reasoning` dropped from the condition")]["verdict"] == "bites"
    assert guards[(59, "early-exit", "early exit `return i` removed")]["failing_tests"] == [
        TESTS + "test_clears_reasoning_of_the_truncated_turn"]
    assert {g["kind"] for g in guards.values()} == {"body", "statement", "condition", "operand", "early-exit"}
    assert len(guards) == 7
    assert all(49 <= line <= 60 for line, _, _ in guards)  # only the agent's lines


def test_fix_branch_dropping_the_no_tool_call_condition_bites_with_the_regression_test(story: Path) -> None:
    hunk, guards = guard_verdicts(story, "fix/trim-reasoning")
    g = guards[(57, "operand", "`not msg.tool_calls` dropped from the condition")]
    assert g["verdict"] == "bites"
    assert g["failing_tests"] == [TESTS + "test_continuation_keeps_its_own_short_reasoning"]


def test_check_bite_reports_the_toothless_guard(story: Path) -> None:
    proc = run_cli("check", "agent/trim-reasoning", "--bite", "--test-cmd", PY, "--format", "json", cwd=story)
    data = json.loads(proc.stdout)
    # issue 41: the gate looks for witnesses, and this guard has one (tests/test_sample_witness.py says which)
    found = [(f["kind"], f["severity"], f["file"], f["line"]) for f in data["findings"]
             if f["kind"].startswith("toothless-guard")]
    assert found == [("toothless-guard-with-witness", "warning", "coder/history.py", 57)]
