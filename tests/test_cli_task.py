"""`check --task` and `--task-file`: the task's code names are looked for in the change (task-identifier-missing)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.clirun import run_cli
from tests.gitrepo import make_repo


def kinds(proc: object) -> list[str]:
    return [f["kind"] for f in json.loads(proc.stdout)["findings"]]  # type: ignore[attr-defined]


def test_a_task_naming_what_the_change_lacks_is_an_error_given_as_text_or_file(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    make_repo(repo, {"pkg/__init__.py": "", "pkg/cfg.py": "LIMIT = 1\n"}, {"pkg/cfg.py": "LIMIT = 2\n"})
    plain = run_cli("check", "agent/work", "--format", "json", cwd=repo)
    assert "task-identifier-missing" not in kinds(plain)  # no task given, no transcript: nothing to look for
    asked = run_cli("check", "agent/work", "--task", "add `max_batch_size` to pkg/cfg.py", "--format", "json",
                    cwd=repo)
    assert asked.returncode == 1 and "task-identifier-missing" in kinds(asked)
    assert "max_batch_size" in asked.stdout
    task = tmp_path / "task.md"
    task.write_text("Raise `LIMIT` in pkg/cfg.py\n")
    done = run_cli("check", "agent/work", "--task-file", str(task), "--format", "json", cwd=repo)
    assert "task-identifier-missing" not in kinds(done)  # the change does touch LIMIT
