"""Claims rerun for real: demo story 03's transcript against its head, a head the agent never ran,
a command that cannot run here, a "tests pass" with no run, and lines that hold no test run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reviewui.core.claims import verify
from reviewui.core.claims.extract import extract_claims
from reviewui.core.transcript import load_transcript
from reviewui.demo import build_sample
from tests import gitrepo
from tests.clirun import ROOT

pytestmark = pytest.mark.slow
BRANCH = "agent/null-guard"


@pytest.fixture
def story(tmp_path: Path) -> Path:
    return build_sample("03-null-guard", tmp_path / "samples").repo_dir


def _claims(repo: Path, *extra: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    venv_bin = str(Path(sys.executable).parent)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{venv_bin}{os.pathsep}/usr/bin{os.pathsep}/bin"}
    args = [sys.executable, "-m", "reviewui", "claims", BRANCH, "--format", "json", *extra]
    if path:
        args += ["--transcript", path]
    return subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True, timeout=300)


def test_the_agents_last_run_and_final_claim_are_confirmed_at_its_head(story: Path) -> None:
    proc = _claims(story)
    assert proc.returncode == 0, proc.stderr
    checks = json.loads(proc.stdout)["claims"]
    assert [(c["kind"], c["outcome"]) for c in checks] == [("run", "confirmed"), ("final", "confirmed")]
    assert checks[0]["reported"] == checks[0]["head"] == {"passed": 7, "failed": 0, "errors": 0}


def test_a_head_the_agent_never_ran_contradicts_its_green_report(story: Path) -> None:
    def git(*a: str) -> None:  # the test's own identity: a new machine has none
        subprocess.run(["git", *a], cwd=story, check=True, capture_output=True, env={**os.environ, **gitrepo.ENV})

    git("checkout", "-q", BRANCH)
    writer = story / "ledger" / "writer.py"
    writer.write_text(writer.read_text().replace('return f"{sign}', 'return "?" + f"{sign}'))
    git("commit", "-qam", "a later change nobody ran the tests on")
    git("checkout", "-q", "main")
    proc = _claims(story)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    checks = json.loads(proc.stdout)["claims"]
    assert [(c["kind"], c["outcome"]) for c in checks] == [("run", "contradicted"), ("final", "contradicted")]
    assert checks[0]["head"]["failed"] > 0
    assert "7 passed" in checks[0]["why"]


def _edited_transcript(story: Path, tmp_path: Path, command: str, output: str | None = None) -> str:
    data = json.loads((story / ".reviewui" / "transcript.json").read_text())
    for m in data["messages"]:
        for call in m.get("tool_calls") or []:
            args = json.loads(call["function"]["arguments"])
            if "pytest" in args.get("command", ""):
                args["command"] = command
                call["function"]["arguments"] = json.dumps(args)
        if output is not None and m.get("role") == "tool" and "passed in" in str(m.get("content")):
            m["content"] = output
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_a_command_whose_program_is_missing_is_unverifiable(story: Path, tmp_path: Path) -> None:
    assert shutil.which("go", path="/usr/bin:/bin") is None
    path = _edited_transcript(story, tmp_path, "cd /workspace && go test ./...", "ok  \texample.com/ledger\t0.01s")
    proc = _claims(story, path=path)
    assert proc.returncode == 0, proc.stderr
    checks = json.loads(proc.stdout)["claims"]
    assert checks[0]["outcome"] == "unverifiable" and "go" in checks[0]["why"], checks


def test_a_final_claim_with_no_run_is_a_warning(story: Path, tmp_path: Path) -> None:
    path = tmp_path / "no-run.json"
    path.write_text(json.dumps({"messages": [
        {"role": "user", "content": "Add a null guard to write_ledger."},
        {"role": "assistant", "content": "I added the guard. All tests pass."}]}))
    proc = _claims(story, path=str(path))
    checks = json.loads(proc.stdout)["claims"]
    assert [c["outcome"] for c in checks] == ["without-run"]
    gate = subprocess.run([sys.executable, "-m", "reviewui", "check", BRANCH, "--transcript", str(path), "--format",
                           "json"], cwd=story, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=300)
    assert "claim-without-run" in {f["kind"] for f in json.loads(gate.stdout)["findings"]}, gate.stdout[-2000:]


def test_what_is_not_a_test_run_is_never_run(story: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    canary = tmp_path / "CANARY"
    path = _edited_transcript(story, tmp_path, f"touch {canary} && python -m pytest -q && touch {canary}.2")
    ran: list[tuple[str, ...]] = []
    from reviewui.core.run import runner

    real = runner.run_tests

    def spy(cwd, command, *a, **kw):  # type: ignore[no-untyped-def]
        agent = kw.get("agent_args")  # the agent's words cross only here, after the trusted program
        ran.append((*command, *(agent.words if agent is not None else ())))
        return real(cwd, command, *a, **kw)

    monkeypatch.setattr("reviewui.core.run.runner.run_tests", spy)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    transcript = load_transcript(Path(path))
    claims = extract_claims(transcript)
    head = subprocess.run(["git", "rev-parse", BRANCH], cwd=story, capture_output=True, text=True).stdout.strip()
    verify.rerun(story, head, [c.command for c in claims if c.command is not None], test_command="python -m pytest",
                 timeout=120)
    assert ran == [("python", "-m", "pytest", "-q")]  # once, however often the agent ran it
    assert not canary.exists() and not Path(f"{canary}.2").exists()
    # a line that holds no test run at all is never even looked at for a rerun
    none = _edited_transcript(story, tmp_path, f"touch {canary} && echo '7 passed'")
    assert [c for c in extract_claims(load_transcript(Path(none))) if c.kind == "run"] == []


def test_a_rerun_of_tests_not_in_the_tree_or_of_nothing_confirms_nothing(story: Path, tmp_path: Path) -> None:
    """Issue 39: "7 passed" from a test file the head does not have, or a selection that runs no test."""
    path = _edited_transcript(story, tmp_path, "python -m pytest -q tests/test_gone.py")
    checks = json.loads(_claims(story, path=path).stdout)["claims"]
    assert [c["outcome"] for c in checks] == ["unverifiable", "unverifiable"], checks
    assert "the tests it names are not in the tree" in checks[0]["why"]
    path = _edited_transcript(story, tmp_path, "python -m pytest -q -k no_such_test_anywhere")
    checks = json.loads(_claims(story, path=path).stdout)["claims"]
    assert [(c["outcome"], c["why"]) for c in checks][0] == ("unverifiable", "the rerun ran no test"), checks
