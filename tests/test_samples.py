"""The sample repos tell their stories through the headless commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reviewui.demo import build_all
from tests.clirun import run_cli

PY = f"{sys.executable} -m pytest"


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    built = build_all(tmp_path_factory.mktemp("samples"))
    return {b.name: b.repo_dir for b in built}


@pytest.mark.slow
def test_correct_guard_hunk_bites(samples: dict[str, Path]) -> None:
    repo = samples["01-trim-reasoning"]
    proc = run_cli("bite", "fix/trim-reasoning", "--base", "agent/trim-reasoning", "--test-cmd", PY,
                   "--format", "json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {"repo", "branch", "base", "head", "test_command", "selected_tests", "baseline", "hunks", "summary"}
    assert data["baseline"]["status"] == "green"
    [hunk] = data["hunks"]
    assert hunk["file"] == "coder/history.py" and "and not msg.tool_calls" in hunk["text"]
    assert hunk["verdict"] == "bites"
    assert hunk["failing_tests"] == ["tests/test_trim_reasoning.py::test_continuation_keeps_its_own_short_reasoning"]


@pytest.mark.slow
def test_agent_branch_new_function_is_broken_not_a_bite(samples: dict[str, Path]) -> None:
    proc = run_cli("bite", "agent/trim-reasoning", "--test-cmd", PY, "--format", "json", cwd=samples["01-trim-reasoning"])
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert [h["verdict"] for h in data["hunks"]] == ["broken"]
    assert "clear_truncated_reasoning" in data["hunks"][0]["reason"]


def check_kinds(repo: Path, branch: str) -> tuple[int, list[tuple[str, str, str | None]]]:
    proc = run_cli("check", branch, "--format", "json", cwd=repo)
    data = json.loads(proc.stdout)
    assert set(data) == {"repo", "branch", "base", "head", "files", "findings", "summary"}
    return proc.returncode, sorted((f["kind"], f["severity"], f["file"]) for f in data["findings"])


def test_sample_2_findings_are_the_story(samples: dict[str, Path]) -> None:
    code, found = check_kinds(samples["02-add-stopped"], "agent/add-stopped")
    assert code == 1
    assert found == [
        ("claimed-done-without-change", "error", None),
        ("duplicate-function", "warning", "scripts/bench.py"),
        ("task-identifier-missing", "error", None),
        ("test-mentions-only", "warning", "scripts/bench.py"),
        ("uncalled-function", "warning", "scripts/bench.py"),
    ]


def test_sample_3_findings_are_the_story(samples: dict[str, Path]) -> None:
    code, found = check_kinds(samples["03-null-guard"], "agent/null-guard")
    assert code == 1
    assert found == [
        ("tests-not-additive", "error", "tests/test_writer.py"),
        ("tests-not-additive", "error", "tests/test_writer.py"),
        ("tests-not-additive", "error", "tests/test_writer.py"),
        ("undeclared-write", "warning", "ledger/defaults.py"),
    ]


def test_sample_1_passes_the_gate_but_not_the_probe(samples: dict[str, Path]) -> None:
    # The gate cannot see a dodging fixture: that is what the fixtures pane and probes are for.
    code, found = check_kinds(samples["01-trim-reasoning"], "agent/trim-reasoning")
    assert code == 0
    assert all(sev != "error" for _, sev, _ in found)
