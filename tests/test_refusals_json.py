"""Every refusal is one JSON object on stdout with exit 3, in every command that has `--format json` (issue 39).

A tool reading only the JSON must see the refusal: `{"refused": {"reason", "tests"}}`,
alone or as a key of the command's own document (`check` keeps its findings).
The control's refusal is in tests/core/bite/test_control_quarantine.py; here a
red baseline, a table that cannot be made, and a sandbox that cannot be had.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewui import cli
from reviewui.core.errors import SandboxError
from tests.clirun import run_cli
from tests.core.bite.helpers import use_venv_python
from tests.gitrepo import make_repo

RED_BASE = {"calc.py": "def f():\n    return 1\n", "test_calc.py": "from calc import f\n\n\ndef test_f():\n    assert f() == 1\n"}
RED_BRANCH = {"calc.py": "def f():\n    return 2\n"}


def test_a_red_baseline_and_a_table_that_cannot_be_made_are_refusals_in_the_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_venv_python(monkeypatch)
    rb = make_repo(tmp_path / "r", RED_BASE, RED_BRANCH)
    proc = run_cli("bite", "agent/work", "--format", "json", cwd=rb.root, timeout=300)
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["refused"]["tests"] == ["test_calc.py::test_f"] and "baseline is red" in doc["refused"]["reason"]
    assert doc["baseline"]["status"] == "red"  # the report is still there: the refusal is a key of it
    green = make_repo(tmp_path / "g", RED_BASE, {"calc.py": "def f():\n    return 1  # kept\n"})
    proc = run_cli("tests", "agent/work", "--format", "json", "--test-cmd", "python -m unittest", cwd=green.root,
                   timeout=300)
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "unavailable" and doc["refused"] == {"reason": doc["reason"], "tests": []}


@pytest.mark.parametrize("command", [["bite"], ["tests"], ["check", "--bite"], ["probe", "--file", "p.py"]])
def test_a_sandbox_that_cannot_be_had_is_one_json_refusal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    from reviewui.core.run import sandbox

    rb = make_repo(tmp_path / "r", RED_BASE, {"calc.py": "def f():\n    return 1  # same\n",
                                              "test_more.py": "def test_more():\n    assert True\n"})
    (rb.root / "p.py").write_text("def test_probe():\n    assert True\n")
    monkeypatch.chdir(rb.root)

    def no_room() -> str:
        raise SandboxError("cannot set the AS limit here; lower memory-limit")

    monkeypatch.setattr(sandbox, "require", no_room)
    code = cli.main([command[0], "agent/work", *command[1:], "--format", "json"])
    out = capsys.readouterr().out
    assert code == 3
    doc = json.loads(out)  # exactly one JSON document on stdout
    assert "AS limit" in doc["refused"]["reason"] and doc["refused"]["tests"] == []


def test_an_untrusted_command_surfacing_anywhere_is_exit_3_and_one_json_refusal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from reviewui.core.bite.instrument import UntrustedCommand
    from reviewui.core.session import ReviewSession

    rb = make_repo(tmp_path / "r", RED_BASE, RED_BRANCH)
    monkeypatch.chdir(rb.root)

    def untrusted(self: ReviewSession) -> None:
        raise UntrustedCommand("the test command is not trusted for bites", ["test_calc.py::test_f"])

    monkeypatch.setattr(ReviewSession, "fixtures", untrusted)
    assert cli.main(["fixtures", "agent/work", "--format", "json"]) == 3
    assert json.loads(capsys.readouterr().out) == {
        "refused": {"reason": "the test command is not trusted for bites", "tests": ["test_calc.py::test_f"]}}
