"""The demo stories' toothless guard and hunk get a witness: `bite --guards --witness` in JSON and Stryker.

Story 01: the role guard (`msg.role == "assistant"` dropped) is toothless because no fixture has a
non-assistant message with reasoning; its witness is one. Story 04: the cap hunk is toothless
because no case reaches the cap; its witness is a policy whose cap is reached.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewui.demo import build_sample
from tests.clirun import run_cli
from tests.project_python import pytest_command

PY = pytest_command()
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def stories(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("stories")
    build_sample("01-trim-reasoning", root)
    build_sample("04-capped-backoff", root)
    return root


def bite(repo: Path, branch: str, fmt: str) -> dict:
    proc = run_cli("bite", branch, "--guards", "--witness", "--test-cmd", PY, "--format", fmt, cwd=repo, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_story_01_the_role_guard_has_a_witness_in_json_and_stryker(stories: Path) -> None:
    repo = stories / "01-trim-reasoning"
    [hunk] = bite(repo, "agent/trim-reasoning", "json")["hunks"]
    [role] = [g for g in hunk["guards"] if g["verdict"] == "toothless"]
    assert (role["line"], role["description"]) == (57, '`msg.role == "assistant"` dropped from the condition')
    w = role["witness"]
    assert w["found"] is True and w["call"].startswith("clear_truncated_reasoning([Message(")
    assert w["head"] != w["reverted"] and w["tries"] >= 1 and w["seconds"] > 0
    assert all("witness" not in g for g in hunk["guards"] if g["verdict"] != "toothless")
    # the same sweep as Stryker (the stored one: no second run), the witness on the surviving mutant
    doc = bite(repo, "agent/trim-reasoning", "stryker")
    [survived] = [m for m in doc["files"]["coder/history.py"]["mutants"] if m["status"] == "Survived"]
    assert survived["witness"] == w and survived["location"]["start"]["line"] == 57
    assert "witness: `clear_truncated_reasoning(" in survived["statusReason"]


def test_story_04_the_cap_hunk_has_a_witness_that_reaches_the_cap(stories: Path) -> None:
    repo = stories / "04-capped-backoff"
    [hunk] = bite(repo, "agent/capped-backoff", "json")["hunks"]
    assert hunk["verdict"] == "toothless" and hunk["guards"] == []
    w = hunk["witness"]
    assert w["found"] is True and w["call"].startswith("next_delay(Policy(")
    head, reverted = float(w["head"]), float(w["reverted"])
    assert head < reverted  # the cap bites: the head waits less than the uncapped delay
    doc = bite(repo, "agent/capped-backoff", "stryker")
    [mutant] = doc["files"]["retry/backoff.py"]["mutants"]
    assert mutant["status"] == "Survived" and mutant["witness"] == w


def test_check_bite_tells_a_toothless_guard_with_a_witness(stories: Path) -> None:
    proc = run_cli("check", "agent/trim-reasoning", "--bite", "--test-cmd", PY, "--format", "json",
                   cwd=stories / "01-trim-reasoning", timeout=300)
    data = json.loads(proc.stdout)
    found = [(f["kind"], f["severity"], f["line"]) for f in data["findings"] if f["kind"].startswith("toothless-guard")]
    assert found == [("toothless-guard-with-witness", "warning", 57)]
    [f] = [f for f in data["findings"] if f["kind"] == "toothless-guard-with-witness"]
    assert "no test checks this case" in f["message"] and "def test_witness_clear_truncated_reasoning" in f["evidence"]
