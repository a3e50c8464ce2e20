"""The sample repos tell their stories through the headless commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewui.demo import build_all
from tests.clirun import run_cli
from tests.project_python import pytest_command

PY = pytest_command()


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
    assert set(data) == {"repo", "branch", "base", "head", "test_command", "selected_tests", "selection", "sandbox",
                         "limits", "disk", "baseline", "hunks", "summary", "controls", "evidence"}
    # issue 27: disk added; issue 44: the interleaved null-revert controls; issue 40: evidence reused/fresh counts
    assert data["evidence"]["hunks"] == {"fresh": 1, "reused": 0} and data["controls"]
    assert data["sandbox"] == "bwrap"
    assert data["limits"] in ("cgroup-v1", "cgroup-v2", "per-process")  # issue 27: how runs were bounded
    assert data["disk"] in ("tmpfs", "watch")  # issue 27: how runs' writes were bounded
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
    # paths read as the repo's own, not the scratch worktree's under the cache dir
    assert "(coder/history.py)" in data["hunks"][0]["reason"]
    assert "worktrees" not in data["hunks"][0]["reason"] + data["hunks"][0].get("output", "")


def check_kinds(repo: Path, branch: str) -> tuple[int, list[tuple[str, str, str | None]]]:
    proc = run_cli("check", branch, "--format", "json", cwd=repo)
    data = json.loads(proc.stdout)
    # issue 42: `authors` added (the git-ai authorship notes' hunk records; empty without notes)
    assert set(data) == {"repo", "branch", "base", "head", "files", "findings", "summary", "authors"}
    assert data["authors"] == []
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


STORY_PROBE = '''from coder.history import NUDGE, Message, ToolCall, clear_truncated_reasoning


def test_probe_continuation_keeps_its_reasoning():
    tx = [
        Message("assistant", reasoning="wasted truncated thought"),
        Message("user", NUDGE),
        Message("assistant", reasoning="short thought", tool_calls=[ToolCall("1", "run")]),
    ]
    clear_truncated_reasoning(tx)
    assert tx[0].reasoning == ""
    assert tx[2].reasoning == "short thought"
'''


@pytest.mark.slow
def test_probe_command_on_the_story(samples: dict[str, Path], tmp_path: Path) -> None:
    probe = tmp_path / "probe_story.py"
    probe.write_text(STORY_PROBE)
    repo = samples["01-trim-reasoning"]
    proc = run_cli("probe", "agent/trim-reasoning", "--file", str(probe), "--test-cmd", PY, "--format", "json", cwd=repo)
    assert proc.returncode == 1, proc.stderr  # issue 16: exit 1 = the probe fails on the branch (was 0 whatever happened)
    data = json.loads(proc.stdout)
    assert set(data) == {"probe", "branch", "base", "reverted", "sandbox", "limits", "disk", "branch_own_conftest",
                         "trusted_config"}  # issue 27: disk added
    assert data["sandbox"] == "bwrap"
    assert data["limits"] in ("cgroup-v1", "cgroup-v2", "per-process")  # issue 27: how runs were bounded
    assert (data["branch"]["status"], data["base"]["status"], data["reverted"]) == ("failed", "error", None)
    proc = run_cli("probe", "fix/trim-reasoning", "--base", "agent/trim-reasoning", "--file", str(probe),
                   "--hunk", "coder/history.py:1", "--test-cmd", PY, "--format", "json", cwd=repo)
    data = json.loads(proc.stdout)
    assert proc.returncode == 0  # passes on the branch
    assert (data["branch"]["status"], data["base"]["status"]) == ("passed", "failed")
    assert data["reverted"]["status"] == "failed"
    assert data["reverted"]["hunk"] == {"file": "coder/history.py", "index": 0, "number": 1}


def test_probe_command_refuses_bad_input(samples: dict[str, Path], tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def test_x(:\n    pass\n")
    repo = samples["01-trim-reasoning"]
    proc = run_cli("probe", "agent/trim-reasoning", "--file", str(bad), cwd=repo)
    assert proc.returncode == 2 and proc.stderr.startswith("reviewui: probe line 1:")
    good = tmp_path / "good.py"
    good.write_text(STORY_PROBE)
    proc = run_cli("probe", "agent/trim-reasoning", "--file", str(good), "--hunk", "coder/history.py:9", cwd=repo)
    assert proc.returncode == 2 and "has no hunk 9 (its hunks are numbered 1 to 1)" in proc.stderr
    proc = run_cli("probe", "agent/trim-reasoning", cwd=repo)
    assert proc.returncode == 2 and "--file" in proc.stderr
    template = tmp_path / "template.py"
    template.write_text('from coder.history import NUDGE\n\n\ndef test_probe_x():\n    assert False, "write the probe"\n')
    for extra in ((), ("--export", str(tmp_path / "t.py"))):
        proc = run_cli("probe", "agent/trim-reasoning", "--file", str(template), *extra, cwd=repo)
        assert proc.returncode == 2 and "probe line 5: still the template" in proc.stderr
    assert not (tmp_path / "t.py").exists()


@pytest.mark.slow
def test_probe_that_cannot_run_on_the_branch_exits_3(samples: dict[str, Path], tmp_path: Path) -> None:
    probe = tmp_path / "probe_broken.py"
    probe.write_text("from coder.nowhere import nothing\n\n\ndef test_x():\n    assert nothing\n")
    proc = run_cli("probe", "agent/trim-reasoning", "--file", str(probe), "--test-cmd", PY, "--format", "json",
                   cwd=samples["01-trim-reasoning"])
    assert proc.returncode == 3, proc.stderr
    assert json.loads(proc.stdout)["branch"]["status"] == "error"


def test_fixtures_command_json(samples: dict[str, Path]) -> None:
    proc = run_cli("fixtures", "agent/add-stopped", "--format", "json", cwd=samples["02-add-stopped"])
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {"tests", "symbols"}
    [sym] = [s for s in data["symbols"] if s["name"].endswith("reject_github_tokens_in_prompt")]
    # the story's test file imports the new function and never calls it
    assert sym["tests_calling"] == [] and sym["tests_importing_only"]
    assert sym["test_named_after"] is False


@pytest.mark.parametrize(
    "name, branch",
    [("01-trim-reasoning", "agent/trim-reasoning"), ("02-add-stopped", "agent/add-stopped"), ("03-null-guard", "agent/null-guard"),
     ("04-capped-backoff", "agent/capped-backoff")],
)
def test_every_hunk_links_to_the_turn_that_wrote_it(samples: dict[str, Path], name: str, branch: str) -> None:
    from reviewui.core.session import ReviewSession
    from reviewui.core.transcript import link_hunks

    session = ReviewSession.open(samples[name], branch)
    transcript = session.transcript()
    assert transcript is not None
    hunks = session.diff.hunks()
    links = link_hunks(transcript, hunks)
    for h in hunks:
        turns = links.turns_for(h.file, h.index)
        assert turns, f"{h.file}:{h.index} not linked"
        assert any(h.file in " ".join(transcript.turns[n - 1].files_written) or
                   any(e.path.endswith(h.file) for e in transcript.turns[n - 1].edits) for n in turns)
        for n in turns:
            assert (h.file, h.index) in links.hunks_for(n)


def test_transcript_command_json(samples: dict[str, Path]) -> None:
    path = samples["01-trim-reasoning"] / ".reviewui" / "transcript.jsonl"
    proc = run_cli("transcript", str(path), "--format", "json", cwd=samples["01-trim-reasoning"])
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["format"] == "claude-code" and data["skipped_lines"] == 0
    assert set(data["turns"][0]) == {"index", "role", "text", "reasoning", "reasoning_chars", "tool_calls",
                                      "files_written", "stop", "usage", "flags", "group", "time",
                                      "edits", "commands", "kind", "note"}  # issue 28 added the last four
    flags = {f for t in data["turns"] for f in t["flags"]}
    assert {"truncated", "reasoning-only", "claims-done"} <= flags


def test_sample_4_fixture_and_parametrize_show_why_the_cap_is_never_reached(samples: dict[str, Path]) -> None:
    proc = run_cli("fixtures", "agent/capped-backoff", "--format", "json", cwd=samples["04-capped-backoff"])
    assert proc.returncode == 0, proc.stderr
    [test] = json.loads(proc.stdout)["tests"]
    assert test["id"] == "tests/test_backoff.py::test_delay_is_capped"
    [fixture] = test["fixtures"]
    # the conftest fixture, with its value, and the six cases: no case reaches max_delay=3600
    assert fixture["name"] == "policy" and fixture["defined_in"] == "tests/conftest.py:7"
    assert "max_delay=3600.0" in fixture["source"]
    [param] = test["parametrize"]
    assert param["argnames"] == ["attempt", "expected"]
    assert [c[1] for c in param["cases"]] == ["0.5", "1.0", "2.0", "8.0", "128.0", "1024.0"]


@pytest.mark.slow
def test_sample_4_cap_is_toothless(samples: dict[str, Path]) -> None:
    proc = run_cli("bite", "agent/capped-backoff", "--test-cmd", PY, "--format", "json", cwd=samples["04-capped-backoff"])
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert [h["verdict"] for h in data["hunks"]] == ["toothless"]
    assert "min(delay, policy.max_delay)" in data["hunks"][0]["text"]
    assert (data["hunks"][0]["index"], data["hunks"][0]["number"]) == (0, 1)
    text = run_cli("bite", "agent/capped-backoff", "--test-cmd", PY, "--hunk", "retry/backoff.py:1",
                   cwd=samples["04-capped-backoff"]).stdout
    assert "TOOTHLESS  retry/backoff.py hunk 1 @@" in text
