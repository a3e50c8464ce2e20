import json

from scripts.bench import main, run
from vibe.runner import RunResult


def fake_runner(task, *, max_steps=20):
    return RunResult(steps=4, done=False, stopped="budget", changed_files=("a.py",), summary="ran out")


def test_run_row_carries_the_result():
    row = run("tidy imports", runner=fake_runner)
    assert row["task"] == "tidy imports"
    assert row["steps"] == 4
    assert row["done"] is False
    assert row["changed"] == ["a.py"]
    assert row["summary"] == "ran out"


def test_main_prints_one_json_row_per_task(capsys):
    assert main(["first", "second"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["task"] for r in rows] == ["first", "second"]


def test_main_without_tasks_is_a_usage_error():
    assert main([]) == 2
